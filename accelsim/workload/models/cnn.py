"""Convolutional models: ResNet-50 v1.5 and MobileNetV2 (torchvision layouts).

Each conv is followed by inference batch-norm (a per-channel scale and shift, counted as an
:class:`~accelsim.workload.nn_ops.Elementwise` ``scale``, tagged ``norm``) and, where the
architecture has one, a ReLU (ReLU6 in MobileNetV2, same cost); residual adds are
``add`` ops. Pooling is left out (no MACs; its traffic is one read of its input). The conv
and fc shapes equal ``workloads/resnet50.yaml`` and ``workloads/mobilenet_v2.yaml``.

Imports: workload.ops, workload.nn_ops, workload.graph.
"""

from __future__ import annotations

from accelsim.workload.graph import GraphBuilder, ModelGraph
from accelsim.workload.nn_ops import Elementwise
from accelsim.workload.ops import Conv2d, Gemm


def _out(h: int, r: int, stride: int, pad: int) -> int:
    return (h + 2 * pad - r) // stride + 1


class _CnnBuilder:
    """Keeps the batch and the current spatial size while convs are appended."""

    def __init__(self, name: str, batch: int, image: int, dtype: str) -> None:
        if batch <= 0 or image <= 0:
            raise ValueError("batch and image must be > 0")
        self.b = GraphBuilder(name, dtype, batch=batch, image=image)
        self.n = batch
        self.x = self.b.tensor("image", batch * 3 * image * image, "input")

    def conv(self, name: str, x: str, c: int, h: int, k: int, r: int, stride: int = 1,
             groups: int = 1, relu: bool = True) -> tuple[str, int]:
        """conv -> bn (-> relu); returns the output tensor and its spatial size."""
        b = self.b
        op = Conv2d(name=name, n=self.n, c=c, h=h, w=h, k=k, r=r, s=r, stride=stride,
                    pad=r // 2, groups=groups, dtype=b.dtype)
        y = b.add(op, [x], component="other")
        ho = op.out_h
        rows = self.n * ho * ho
        y = b.add(Elementwise(name=f"{name}.bn", rows=rows, cols=k, fn="scale", dtype=b.dtype),
                  [y], component="norm")
        if relu:
            y = b.add(Elementwise(name=f"{name}.relu", rows=rows, cols=k, fn="relu",
                                  dtype=b.dtype), [y], component="other")
        return y, ho

    def add(self, name: str, x: str, y: str, h: int, c: int, relu: bool) -> str:
        """Residual add (-> relu)."""
        b, rows = self.b, self.n * h * h
        z = b.add(Elementwise(name=name, rows=rows, cols=c, fn="add", dtype=b.dtype), [x, y],
                  component="other")
        if relu:
            z = b.add(Elementwise(name=f"{name}.relu", rows=rows, cols=c, fn="relu",
                                  dtype=b.dtype), [z], component="other")
        return z

    def fc(self, x: str, k: int, n: int) -> ModelGraph:
        y = self.b.add(Gemm(name="fc", m=self.n, n=n, k=k, dtype=self.b.dtype), [x],
                       component="other")
        return self.b.build([y])


def resnet50(*, batch: int = 1, image: int = 224, dtype: str = "bf16") -> ModelGraph:
    """ResNet-50 v1.5: the stride-2 of a downsampling bottleneck is on its 3x3 conv."""
    cb = _CnnBuilder("resnet50", batch, image, dtype)
    x, h = cb.conv("conv1", cb.x, 3, image, 64, 7, stride=2)
    h = _out(h, 3, 2, 1)  # max-pool 3x3/2 (not an op)
    cin = 64
    for li, (width, blocks) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3), strict=True)):
        for blk in range(blocks):
            cb.b.layer = sum((3, 4, 6, 3)[:li]) + blk
            s = 2 if blk == 0 and li > 0 else 1
            p = f"layer{li + 1}.{blk}"
            y, _ = cb.conv(f"{p}.conv1", x, cin, h, width, 1)
            y, ho = cb.conv(f"{p}.conv2", y, width, h, width, 3, stride=s)
            y, _ = cb.conv(f"{p}.conv3", y, width, ho, 4 * width, 1, relu=False)
            short = x
            if blk == 0:
                short, _ = cb.conv(f"{p}.downsample", x, cin, h, 4 * width, 1, stride=s,
                                   relu=False)
            x = cb.add(f"{p}.add", y, short, ho, 4 * width, relu=True)
            cin, h = 4 * width, ho
    cb.b.layer = None
    return cb.fc(x, cin, 1000)


MOBILENET_V2_SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                         (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))
"""(expansion t, output channels c, repeats n, first stride s): Sandler et al. 2018, Table 2."""


def mobilenet_v2(*, batch: int = 1, image: int = 224, dtype: str = "bf16") -> ModelGraph:
    """MobileNetV2, width 1.0: inverted residual blocks with 3x3 depthwise convs."""
    cb = _CnnBuilder("mobilenet_v2", batch, image, dtype)
    x, h = cb.conv("features.0", cb.x, 3, image, 32, 3, stride=2)
    cin, idx = 32, 1
    for t, c, n, s in MOBILENET_V2_SETTINGS:
        for i in range(n):
            cb.b.layer = idx - 1
            stride = s if i == 0 else 1
            hid = cin * t
            p = f"features.{idx}"
            y = x
            if t != 1:
                y, _ = cb.conv(f"{p}.expand", y, cin, h, hid, 1)
            y, ho = cb.conv(f"{p}.dw", y, hid, h, hid, 3, stride=stride, groups=hid)
            y, _ = cb.conv(f"{p}.project", y, hid, ho, c, 1, relu=False)
            if stride == 1 and cin == c:
                y = cb.add(f"{p}.add", y, x, ho, c, relu=False)
            x, cin, h, idx = y, c, ho, idx + 1
    cb.b.layer = None
    x, h = cb.conv(f"features.{idx}", x, cin, h, 1280, 1)
    return cb.fc(x, 1280, 1000)
