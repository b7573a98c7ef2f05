"""Convolutional models as torchvision builds them for inference (``eval()``, NHWC).

* ``resnet50``: **torchvision ResNet-50 v1.5** (``torchvision.models.resnet50``): stem
  conv 7x7/2 (64) + BN + ReLU, max-pool 3x3/2 (pad 1), bottlenecks [3, 4, 6, 3] of widths
  64-512 (1x1 -> 3x3 -> 1x1 x4, each conv + BN, ReLU after the first two; the stride 2 of
  a downsampling block is on its 3x3 conv, v1.5), a downsample 1x1 conv + BN on the first
  block of each stage, residual add + ReLU, global average pool, fc 2048 -> 1000.
* ``mobilenet_v2``: **torchvision MobileNetV2, width 1.0** (``torchvision.models.
  mobilenet_v2``, Sandler et al. 2018 Table 2): stem conv 3x3/2 (32) + BN + ReLU6, 17
  inverted residual blocks (1x1 expand + BN + ReLU6 when t > 1, 3x3 depthwise + BN + ReLU6,
  1x1 project + BN, residual add when stride 1 and C in = C out), final 1x1 conv 320 -> 1280
  + BN + ReLU6, global average pool, classifier (dropout: a no-op in eval) fc 1280 -> 1000.

Every op is its own node, as eager PyTorch launches it: BatchNorm is a
:class:`~accelsim.workload.nn_ops.BatchNorm2d` (``norm``; its running statistics and affine
parameters are read, but not counted as weights: the parameter counts are the conv and fc
weights), ReLU and ReLU6 are ``relu`` elementwise ops (ReLU6 is the same clamp kernel),
residual adds are ``add`` ops, pools are :class:`~accelsim.workload.nn_ops.Pool2d`. The conv
and fc shapes equal ``workloads/resnet50_convs.yaml`` and
``workloads/mobilenet_v2_convs.yaml``, which list only those (no pools, BN, ReLU or adds).

Imports: workload.ops, workload.nn_ops, workload.graph.
"""

from __future__ import annotations

from accelsim.workload.graph import GraphBuilder, ModelGraph
from accelsim.workload.nn_ops import BatchNorm2d, Elementwise, Pool2d
from accelsim.workload.ops import Conv2d, Gemm


class _CnnBuilder:
    """Keeps the batch and the current spatial size while convs are appended."""

    def __init__(self, name: str, batch: int, image: int, dtype: str) -> None:
        if batch <= 0 or image <= 0:
            raise ValueError("batch and image must be > 0")
        self.b = GraphBuilder(name, dtype, batch=batch, image=image)
        self.n = batch
        self.h_last = image
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
        y = b.add(BatchNorm2d(name=f"{name}.bn", n=self.n, c=k, h=ho, w=ho, dtype=b.dtype),
                  [y], component="norm", auto_weight=False)
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

    def pool(self, name: str, x: str, c: int, h: int, mode: str) -> tuple[str, int]:
        """Max-pool 3x3/2 (pad 1) or global average pool; returns output and its size."""
        op = Pool2d(name=name, n=self.n, c=c, h=h, w=h, mode=mode, dtype=self.b.dtype)
        return self.b.add(op, [x], component="other"), op.out_h

    def fc(self, x: str, k: int, n: int) -> ModelGraph:
        """Global average pool, then the classifier GEMM."""
        x, _ = self.pool("avgpool", x, k, self.h_last, "global_avg")
        y = self.b.add(Gemm(name="fc", m=self.n, n=n, k=k, dtype=self.b.dtype, bias=True),
                       [x], component="other")
        return self.b.build([y])


def resnet50(*, batch: int = 1, image: int = 224, dtype: str = "bf16") -> ModelGraph:
    """ResNet-50 v1.5: the stride-2 of a downsampling bottleneck is on its 3x3 conv."""
    cb = _CnnBuilder("resnet50", batch, image, dtype)
    x, h = cb.conv("conv1", cb.x, 3, image, 64, 7, stride=2)
    x, h = cb.pool("maxpool", x, 64, h, "max")
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
    cb.h_last = h
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
    cb.h_last = h
    return cb.fc(x, 1280, 1000)
