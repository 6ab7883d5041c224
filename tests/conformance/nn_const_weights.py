#!/usr/bin/python3
"""Node-test-style cases for MatMul, Gemm, Conv, ConvTranspose and pooling with *constant*
weights (initializers), so ftaxc's compile-time weight packing (ft_prepack) is exercised end to
end; the ONNX backend node tests pass weights as inputs and never reach it. Expected outputs
come from numpy/torch in float64. Usage:
    /usr/bin/python3 tests/conformance/nn_const_weights.py OUT_DIR
    for t in OUT_DIR/*; do tests/conformance/run_node_test.sh build $t /tmp/nn-work; done
"""
import sys
import numpy as np, onnx, os, torch
from onnx import helper, numpy_helper, TensorProto
rng = np.random.default_rng(0)
root = sys.argv[1]
def save(name, nodes, inputs, inits, outputs, feeds, expect, opset=17):
    d = os.path.join(root, name); os.makedirs(d + '/test_data_set_0', exist_ok=True)
    g = helper.make_graph(nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(v.astype(np.float32), n) for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    onnx.save(m, d + '/model.onnx')
    for i, (n, v) in enumerate(inputs):
        t = numpy_helper.from_array(v.astype(np.float32), n)
        open(f'{d}/test_data_set_0/input_{i}.pb', 'wb').write(t.SerializeToString())
    for i, v in enumerate(expect):
        t = numpy_helper.from_array(np.asarray(v, dtype=np.float32), outputs[i])
        open(f'{d}/test_data_set_0/output_{i}.pb', 'wb').write(t.SerializeToString())
R = lambda *s: rng.standard_normal(s).astype(np.float32)
T = lambda x: torch.from_numpy(x.astype(np.float64))
# MatMul with constant B
for name, a, b in [('mm_merge', R(2, 37, 70), R(70, 45)), ('mm_batch', R(2, 3, 17, 20), R(3, 20, 33)),
                   ('mm_vec', R(70), R(70, 45)), ('mm_k1', R(5, 13, 1), R(1, 33)), ('mm_n1', R(40, 300), R(300, 1)),
                   ('mm_big', R(1, 128, 768), R(768, 100) / 28)]:
    save(name, [helper.make_node('MatMul', ['A', 'B'], ['Y'])], [('A', a)], [('B', b)], ['Y'], None, [a.astype(np.float64) @ b])
# MatMul both runtime, broadcast batch
a, b = R(2, 1, 19, 37), R(3, 37, 41)
save('mm_rt', [helper.make_node('MatMul', ['A', 'B'], ['Y'])], [('A', a), ('B', b)], [], ['Y'], None, [a.astype(np.float64) @ b])
# Gemm
for name, ta, tb, cshape in [('gemm_tb', 0, 1, (29,)), ('gemm_ta', 1, 0, (13, 1)), ('gemm_full', 1, 1, (13, 29)), ('gemm_scalar', 0, 0, ())]:
    M, N, K = 13, 29, 50
    a = R(K, M) if ta else R(M, K); b = R(N, K) if tb else R(K, N); c = R(*cshape)
    at = a.T if ta else a; bt = b.T if tb else b
    y = 0.5 * (at.astype(np.float64) @ bt) + 2.0 * c
    save(name, [helper.make_node('Gemm', ['A', 'B', 'C'], ['Y'], alpha=0.5, beta=2.0, transA=ta, transB=tb)],
         [('A', a)], [('B', b), ('C', c)], ['Y'], None, [y])
# Conv with constant weights
def conv(name, x, w, b, **kw):
    attrs = dict(kw)
    nd = x.ndim - 2
    f = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}[nd]
    pads = kw.get('pads', [0] * 2 * nd)
    xp = torch.nn.functional.pad(T(x), sum([[pads[nd - 1 - i], pads[2 * nd - 1 - i]] for i in range(nd)], []))
    y = f(xp, T(w), T(b) if b is not None else None, stride=kw.get('strides', 1), dilation=kw.get('dilations', 1), groups=kw.get('group', 1))
    ins = ['X', 'W'] + (['B'] if b is not None else [])
    inits = [('W', w)] + ([('B', b)] if b is not None else [])
    save(name, [helper.make_node('Conv', ins, ['Y'], **attrs)], [('X', x)], inits, ['Y'], None, [y.numpy()])
conv('conv_3x3', R(2, 16, 30, 30), R(24, 16, 3, 3), R(24), pads=[1, 1, 1, 1])
conv('conv_s2g2', R(1, 8, 17, 19), R(10, 4, 3, 5), R(10), pads=[1, 2, 0, 1], strides=[2, 3], group=2, dilations=[2, 1])
conv('conv_1x1', R(2, 20, 9, 11), R(30, 20, 1, 1), R(30))
conv('conv_1x1_s2', R(1, 20, 9, 11), R(30, 20, 1, 1), None, strides=[2, 2])
conv('conv_dw3', R(2, 12, 15, 14), R(12, 1, 3, 3), R(12), pads=[1, 1, 1, 1], group=12)
conv('conv_dw5s2', R(1, 12, 15, 14), R(12, 1, 5, 5), R(12), pads=[2, 2, 2, 2], strides=[2, 2], group=12)
conv('conv_dw_dil', R(1, 6, 15, 14), R(6, 1, 3, 3), None, pads=[2, 1, 2, 1], dilations=[2, 1], strides=[1, 3], group=6)
conv('conv_dwmult', R(1, 6, 10, 10), R(12, 1, 3, 3), R(12), group=6)
conv('conv_1d', R(2, 5, 40), R(7, 5, 4), R(7), pads=[3, 1], strides=[2])
conv('conv_s2_3x3', R(1, 16, 29, 30), R(24, 16, 3, 3), R(24), pads=[1, 1, 1, 1], strides=[2, 2])
conv('conv_s21', R(2, 6, 13, 17), R(10, 3, 5, 3), R(10), pads=[2, 0, 1, 1], strides=[2, 1], group=2)
conv('conv_3d', R(1, 3, 6, 7, 8), R(4, 3, 3, 2, 3), R(4), pads=[1, 0, 1, 1, 1, 0])
conv('conv_resnet', R(1, 64, 56, 56), R(64, 64, 3, 3) / 24, R(64), pads=[1, 1, 1, 1])
conv('conv_7x7', R(1, 3, 64, 64), R(16, 3, 7, 7), R(16), pads=[3, 3, 3, 3], strides=[2, 2])
conv('dw_112', R(1, 4, 112, 112), R(4, 1, 3, 3), R(4), pads=[1, 1, 1, 1], group=4)
conv('dw_s2_odd', R(1, 5, 33, 31), R(5, 1, 3, 3), R(5), pads=[1, 1, 1, 1], strides=[2, 2], group=5)
conv('dw_s2_d2', R(1, 5, 33, 31), R(5, 1, 3, 3), None, pads=[2, 2, 1, 1], strides=[2, 2], dilations=[2, 2], group=5)
conv('dw_s3', R(1, 5, 33, 31), R(5, 1, 5, 5), R(5), pads=[2, 2, 2, 2], strides=[3, 3], group=5)
conv('dw_s5', R(1, 3, 33, 31), R(3, 1, 5, 5), R(3), pads=[1, 1, 1, 1], strides=[5, 5], group=3)
conv('dw_7x7', R(1, 4, 20, 20), R(4, 1, 7, 7), R(4), pads=[3, 3, 3, 3], group=4)
conv('dw_wide', R(1, 2, 5, 3000), R(2, 1, 3, 3), R(2), pads=[1, 1, 1, 1], group=2)
conv('dw_1d', R(2, 6, 50), R(6, 1, 5), R(6), pads=[2, 2], group=6)
conv('dw_1d_s2', R(2, 6, 50), R(6, 1, 3), R(6), pads=[1, 0], strides=[2], group=6)
conv('conv_shift_dil', R(1, 7, 20, 23), R(9, 7, 3, 3), R(9), pads=[2, 0, 1, 3], dilations=[2, 3])
conv('conv_shift_1d', R(1, 7, 40), R(9, 7, 5), R(9), pads=[0, 4])
conv('conv_shift_g3', R(2, 9, 12, 12), R(6, 3, 3, 3), R(6), pads=[1, 1, 1, 1], group=3)
# ConvTranspose with constant weights
x, w, b = R(2, 4, 7, 6), R(4, 3, 3, 3), R(6)
y = torch.nn.functional.conv_transpose2d(T(x), T(w), T(b), stride=2, padding=1, output_padding=1, groups=2)
save('convt_g2', [helper.make_node('ConvTranspose', ['X', 'W', 'B'], ['Y'], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1], group=2)],
     [('X', x)], [('W', w), ('B', b)], ['Y'], None, [y.numpy()])
x, w = R(1, 40, 20, 20), R(40, 8, 4, 4)
y = torch.nn.functional.conv_transpose2d(T(x), T(w), None, stride=2, padding=1)
save('convt_big', [helper.make_node('ConvTranspose', ['X', 'W'], ['Y'], strides=[2, 2], pads=[1, 1, 1, 1])],
     [('X', x)], [('W', w)], ['Y'], None, [y.numpy()])
# pools
x = R(2, 3, 17, 16)
y = torch.nn.functional.max_pool2d(T(x), 3, 2, 1, ceil_mode=True)
save('maxpool_ceil', [helper.make_node('MaxPool', ['X'], ['Y'], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)], [('X', x)], [], ['Y'], None, [y.numpy()])
y = torch.nn.functional.avg_pool2d(T(x), 3, 2, 1, ceil_mode=True, count_include_pad=True)
save('avgpool_ceil_incl', [helper.make_node('AveragePool', ['X'], ['Y'], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)], [('X', x)], [], ['Y'], None, [y.numpy()])
y = torch.nn.functional.avg_pool2d(T(x), 3, 2, 1, ceil_mode=True, count_include_pad=False)
save('avgpool_ceil_excl', [helper.make_node('AveragePool', ['X'], ['Y'], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)], [('X', x)], [], ['Y'], None, [y.numpy()])
y = torch.nn.functional.lp_pool2d(T(x), 2, 3, 2)
save('lppool', [helper.make_node('LpPool', ['X'], ['Y'], kernel_shape=[3, 3], strides=[2, 2], p=2)], [('X', x)], [], ['Y'], None, [y.numpy()], opset=18)
x = R(2, 5, 37, 3)
save('gap', [helper.make_node('GlobalAveragePool', ['X'], ['Y'])], [('X', x)], [], ['Y'], None, [x.astype(np.float64).mean(axis=(2, 3), keepdims=True)])
save('gmp', [helper.make_node('GlobalMaxPool', ['X'], ['Y'])], [('X', x)], [], ['Y'], None, [x.max(axis=(2, 3), keepdims=True)])
save('glp', [helper.make_node('GlobalLpPool', ['X'], ['Y'])], [('X', x)], [], ['Y'], None, [np.sqrt((x.astype(np.float64) ** 2).sum(axis=(2, 3), keepdims=True))])
for name, a, b in [('mm_1d1d', R(7), R(7)), ('mm_3d1d', R(2, 3, 7), R(7)), ('mm_1d3d', R(7), R(2, 7, 5)), ('mm_bc4', R(3, 1, 4, 6), R(2, 6, 5))]:
    save(name, [helper.make_node('MatMul', ['A', 'B'], ['Y'])], [('A', a), ('B', b)], [], ['Y'], None, [np.matmul(a.astype(np.float64), b)])
