B
global_avgJÛI>ã‘¤>Ü	>