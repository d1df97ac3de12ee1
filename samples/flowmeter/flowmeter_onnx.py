"""ONNX export of the trained flow-meter models, input normalisation folded into the first layer.

The conv net goes through torch.onnx.export (opset 13). The LSTM net is written
node by node (opset 14) so that its two LSTM nodes take sequence_lens: a window
whose leading part is missing is shifted to the front and its length passed in
`lens`, and each LSTM stops at that length.
"""
import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper


class FoldedConv(torch.nn.Module):
    """The conv net with (x - mean) / std folded into the first convolution."""

    def __init__(self, net):
        super().__init__()
        mean, std = net.mean.view(-1), net.std.view(-1)
        self.c1 = torch.nn.Conv1d(7, 32, 5)
        with torch.no_grad():
            w = net.c1.weight / std.view(1, -1, 1)
            self.c1.weight.copy_(w)
            self.c1.bias.copy_(net.c1.bias - (w * mean.view(1, -1, 1)).sum(dim=(1, 2)))
        self.c2, self.fc1, self.fc2 = net.c2, net.fc1, net.fc2
        self.register_buffer("scale", net.scale.clone())

    def forward(self, x):
        h = torch.relu(self.c2(torch.relu(self.c1(x)))).mean(dim=2)
        return torch.nn.functional.softplus(self.fc2(torch.relu(self.fc1(h)))) * self.scale


def export_conv(net, path):
    """x f32[N, 7, W] -> rates f32[N, 3]."""
    folded = FoldedConv(net).eval()
    probe = torch.rand(3, 7, 60) * net.std.view(1, -1, 1) + net.mean.view(1, -1, 1)
    with torch.no_grad():
        assert torch.allclose(folded(probe), net(probe), rtol=1e-3, atol=1e-2), "folding changed the conv net"
    torch.onnx.export(folded, probe, path, input_names=["x"], output_names=["rates"],
                      dynamic_axes={"x": {0: "N", 2: "W"}, "rates": {0: "N"}}, opset_version=13,
                      do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))


def _gates(m):
    """PyTorch gate blocks (i, f, g, o) reordered to ONNX's (i, o, f, c)."""
    i, f, g, o = np.split(m, 4, axis=0)
    return np.concatenate([i, o, f, g], axis=0)


def _lstm_weights(sd, layer, mean=None, std=None):
    """W [1, 4H, in], R [1, 4H, H], B [1, 8H] of one layer, normalisation folded into layer 0."""
    w, r = sd["lstm.weight_ih_l%d" % layer], sd["lstm.weight_hh_l%d" % layer]
    b_ih, b_hh = sd["lstm.bias_ih_l%d" % layer], sd["lstm.bias_hh_l%d" % layer]
    if mean is not None:
        w = w / std[None, :]
        b_ih = b_ih - w @ mean
    b = np.concatenate([_gates(b_ih), _gates(b_hh)])
    return _gates(w)[None], _gates(r)[None], b[None]


def export_lstm(net, path):
    """x f32[N, 7, W], lens i32[N] -> rates f32[N, 3]."""
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in net.state_dict().items()}
    hidden = net.lstm.hidden_size
    mean, std = sd["mean"].reshape(-1), sd["std"].reshape(-1)
    w1, r1, b1 = _lstm_weights(sd, 0, mean, std)
    w2, r2, b2 = _lstm_weights(sd, 1)
    inits = {"W1": w1, "R1": r1, "B1": b1, "W2": w2, "R2": r2, "B2": b2,
             "fc_w": sd["fc.weight"], "fc_b": sd["fc.bias"], "scale": sd["scale"],
             "axis0": np.array([0], dtype=np.int64), "axis1": np.array([1], dtype=np.int64)}
    nodes = [
        helper.make_node("Transpose", ["x"], ["x_twf"], perm=[2, 0, 1], name="to_time_major"),
        helper.make_node("LSTM", ["x_twf", "W1", "R1", "B1", "lens"], ["y1"], hidden_size=hidden, name="lstm1"),
        helper.make_node("Squeeze", ["y1", "axis1"], ["y1_s"], name="drop_direction"),
        helper.make_node("LSTM", ["y1_s", "W2", "R2", "B2", "lens"], ["", "h2"], hidden_size=hidden, name="lstm2"),
        helper.make_node("Squeeze", ["h2", "axis0"], ["last"], name="last_valid_step"),
        helper.make_node("Gemm", ["last", "fc_w", "fc_b"], ["z"], transB=1, name="head"),
        helper.make_node("Softplus", ["z"], ["rates_scaled"], name="non_negative"),
        helper.make_node("Mul", ["rates_scaled", "scale"], ["rates"], name="to_sm3h"),
    ]
    graph = helper.make_graph(
        nodes, "flowmeter_lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 7, "W"]),
         helper.make_tensor_value_info("lens", TensorProto.INT32, ["N"])],
        [helper.make_tensor_value_info("rates", TensorProto.FLOAT, ["N", 3])],
        [numpy_helper.from_array(np.ascontiguousarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                              producer_name="canary samples/flowmeter/train.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
