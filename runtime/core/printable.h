// Text from a model or a file made safe to print: names in error messages,
// listings, DOT, JSON and traces come from whoever wrote the model, and a
// control byte (an ESC starting a terminal sequence), a C1 control, a
// bidirectional override or invalid UTF-8 in one could recolour a terminal,
// hide text or break a JSON document. `printable` writes each such byte or
// code point as an escape and leaves everything else, backslashes included,
// as it is, so clean text (nearly every name) comes back unchanged.
#pragma once

#include <string>
#include <string_view>

namespace canary {

// Controls and DEL as \xHH (a newline too, unless keep_newlines), bytes that
// are not valid UTF-8 as \xHH each, C1 controls and the bidirectional
// embedding, override and isolate marks as \uHHHH; the rest unchanged.
std::string printable(std::string_view text, bool keep_newlines = false);

// Whether printable(text, keep_newlines) would return text unchanged.
bool is_printable(std::string_view text, bool keep_newlines = false);

}  // namespace canary
