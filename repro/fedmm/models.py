"""The networks of paper 004 (docs/decisions.md#fedmm-models), written functionally over a flat
parameter vector.

A :class:`DANet` lists its parameters (name, shape, player) in order; ``flat`` vectors are the
concatenation in that order, omega (feature extractor, bottleneck, label predictor) first and
psi (adversarial head) last, so the two blocks of the algorithms are contiguous. Forward passes
are pure functions of a ``{name: tensor}`` dict, so ``torch.func.vmap`` runs all clients at
once. Dropout masks are inputs (drawn by the caller from its own ``torch.Generator``), never
global random state.

Initialisation [authors' code, ``utils.py``]: weights ~ N(0, 0.1^2) truncated at +-2 sigma,
biases 0.1 (docs/decisions.md#fedmm-models). BatchNorm affine parameters (Office bottleneck): weight
1, bias 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from repro.core.validation import check_choice

Tensor = torch.Tensor
DA_METHODS = ("DANN", "CDAN", "MDD")
DROPOUT_P = 0.5


@dataclass(frozen=True)
class ParamSpec:
    """One parameter tensor of a :class:`DANet`: its name, shape, player and kind."""

    name: str
    shape: tuple[int, ...]
    player: str  # "omega" or "psi"
    kind: str  # "weight", "bias", "bn_weight", "bn_bias"

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def _linear(name: str, n_in: int, n_out: int, player: str) -> list[ParamSpec]:
    return [ParamSpec(f"{name}.weight", (n_out, n_in), player, "weight"),
            ParamSpec(f"{name}.bias", (n_out,), player, "bias")]


def _mlp(prefix: str, widths: list[int], player: str) -> list[ParamSpec]:
    out = []
    for k, (a, b) in enumerate(zip(widths[:-1], widths[1:], strict=True)):
        out += _linear(f"{prefix}.{k}", a, b, player)
    return out


def mlp_forward(p: dict[str, Tensor], prefix: str, n_layers: int, x: Tensor,
                masks: dict[str, Tensor] | None) -> Tensor:
    """Linear -> ReLU [-> dropout] ... -> Linear; dropout masks ``{prefix}.{k}`` when given."""
    for k in range(n_layers):
        x = F.linear(x, p[f"{prefix}.{k}.weight"], p[f"{prefix}.{k}.bias"])
        if k < n_layers - 1:
            x = F.relu(x)
            if masks is not None and f"{prefix}.{k}" in masks:
                x = x * masks[f"{prefix}.{k}"]
    return x


class DANet:
    """Feature extractor zeta^1, label predictor zeta^2 and adversarial head h_psi.

    Subclasses define ``specs``, ``features(p, x, ...)``, ``dropout_widths`` (which hidden
    layers carry dropout in training) and the head sizes.
    """

    specs: list[ParamSpec]
    method: str
    n_classes: int
    feature_dim: int
    classifier_layers: int
    adversary_layers: int
    dropout_widths: dict[str, int]

    # -- flat <-> dict -------------------------------------------------------------------------
    @property
    def sizes(self) -> dict[str, int]:
        return {"omega": sum(s.numel for s in self.specs if s.player == "omega"),
                "psi": sum(s.numel for s in self.specs if s.player == "psi")}

    @property
    def dim(self) -> int:
        return sum(s.numel for s in self.specs)

    def unflatten(self, flat: Tensor) -> dict[str, Tensor]:
        parts = torch.split(flat, [s.numel for s in self.specs])
        return {s.name: t.view(s.shape) for s, t in zip(self.specs, parts, strict=True)}

    def init(self, generator: torch.Generator, dtype=torch.float32) -> Tensor:
        """Truncated-normal(0, 0.1^2, +-2 sigma) weights, bias 0.1 (authors' ``utils.py``)."""
        chunks = []
        for s in self.specs:
            if s.kind == "weight":
                w = torch.empty(s.shape, dtype=dtype)
                torch.nn.init.trunc_normal_(w, 0.0, 0.1, -0.2, 0.2, generator=generator)
                chunks.append(w.flatten())
            elif s.kind == "bias":
                chunks.append(torch.full((s.numel,), 0.1, dtype=dtype))
            elif s.kind == "bn_weight":
                chunks.append(torch.ones(s.numel, dtype=dtype))
            else:
                chunks.append(torch.zeros(s.numel, dtype=dtype))
        return torch.cat(chunks)

    # -- heads ---------------------------------------------------------------------------------
    def classify(self, p, z, masks=None) -> Tensor:
        return mlp_forward(p, "cls", self.classifier_layers, z, masks)

    def adversary(self, p, a, masks=None) -> Tensor:
        return mlp_forward(p, "adv", self.adversary_layers, a, masks)

    def dropout_masks(self, n_rows: int, generator: torch.Generator,
                      dtype=torch.float32) -> dict[str, Tensor]:
        """Inverted-dropout masks (values 0 or 1/(1-p)) for one training forward pass."""
        keep = 1.0 - DROPOUT_P
        return {name: torch.bernoulli(torch.full((n_rows, w), keep, dtype=dtype),
                                      generator=generator) / keep
                for name, w in self.dropout_widths.items()}


def _adv_in(method: str, feature_dim: int, n_classes: int) -> int:
    return feature_dim * n_classes if method == "CDAN" else feature_dim


class MnistNet(DANet):
    """The "toybase" CNN of the authors' code for MNIST -> MNIST-M
    (docs/decisions.md#fedmm-mnist-model).

    Conv(3->32, 5x5, pad 2) ReLU MaxPool2 -> Conv(32->48, 5x5, pad 2) ReLU MaxPool2 -> 2352-d.
    DANN/CDAN label predictor 2352-100-100-10; MDD 2352-200-200-10 with dropout 0.5; domain
    head DANN 2352-100-2, CDAN (10 x 2352 outer product)-100-2, MDD a copy of the MDD label
    predictor. Input uint8 RGB is normalised as (x - mean(batch tensor)) / 255.
    """

    feature_dim = 7 * 7 * 48

    def __init__(self, method: str) -> None:
        check_choice("method", method, DA_METHODS)
        self.method = method
        self.n_classes = 10
        conv = [ParamSpec("conv1.weight", (32, 3, 5, 5), "omega", "weight"),
                ParamSpec("conv1.bias", (32,), "omega", "bias"),
                ParamSpec("conv2.weight", (48, 32, 5, 5), "omega", "weight"),
                ParamSpec("conv2.bias", (48,), "omega", "bias")]
        d = self.feature_dim
        if method == "MDD":
            cls_w, adv_w = [d, 200, 200, 10], [d, 200, 200, 10]
            self.dropout_widths = {"cls.0": 200, "cls.1": 200, "adv.0": 200, "adv.1": 200}
        else:
            cls_w = [d, 100, 100, 10]
            adv_w = [_adv_in(method, d, 10), 100, 2]
            self.dropout_widths = {}
        self.classifier_layers = len(cls_w) - 1
        self.adversary_layers = len(adv_w) - 1
        self.specs = conv + _mlp("cls", cls_w, "omega") + _mlp("adv", adv_w, "psi")

    def features(self, p, x: Tensor, mean: Tensor | None = None, train: bool = True,
                 stats: dict | None = None) -> Tensor:
        """``x``: (B, 28, 28, 3) uint8 or float; ``mean``: the evaluated set's mean (eval)."""
        x = x.to(p["conv1.weight"].dtype).permute(0, 3, 1, 2)
        x = (x - (x.mean() if mean is None else mean)) / 255.0
        h = F.max_pool2d(F.relu(F.conv2d(x, p["conv1.weight"], p["conv1.bias"], padding=2)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p["conv2.weight"], p["conv2.bias"], padding=2)), 2)
        return h.flatten(1)


class OfficeHeads(DANet):
    """Bottleneck + label predictor + adversarial head on frozen backbone features
    (docs/decisions.md#fedmm-office-model).

    Bottleneck Linear(d -> 1024) BN ReLU Dropout; label predictor 1024-1024-31 (dropout after
    the hidden layer); DANN head 1024-1024-2, CDAN head (31 x 1024)-1024-2, MDD head a copy of
    the label predictor. ``d`` = backbone feature width (1280 for the available width-1.0
    MobileNetV2; the paper's width-1.4 network gives 1792).
    """

    BN_EPS = 1e-5
    BN_MOMENTUM = 0.1

    def __init__(self, method: str, feature_in: int = 1280, n_classes: int = 31,
                 width: int = 1024) -> None:
        check_choice("method", method, DA_METHODS)
        self.method, self.n_classes, self.feature_dim = method, n_classes, width
        self.feature_in = feature_in
        bott = [ParamSpec("bott.weight", (width, feature_in), "omega", "weight"),
                ParamSpec("bott.bias", (width,), "omega", "bias"),
                ParamSpec("bott.bn.weight", (width,), "omega", "bn_weight"),
                ParamSpec("bott.bn.bias", (width,), "omega", "bn_bias")]
        cls_w = [width, width, n_classes]
        adv_w = cls_w if method == "MDD" else [_adv_in(method, width, n_classes), width, 2]
        self.classifier_layers, self.adversary_layers = 2, 2
        self.dropout_widths = {"bott": width, "cls.0": width, "adv.0": width}
        self.specs = bott + _mlp("cls", cls_w, "omega") + _mlp("adv", adv_w, "psi")

    def features(self, p, x: Tensor, mean: Tensor | None = None, train: bool = True,
                 stats: dict | None = None, masks: dict | None = None) -> Tensor:
        """``train``: batch statistics (written into ``stats`` for the running averages);
        eval: ``stats['running_mean'/'running_var']``.
        """
        h = F.linear(x.to(p["bott.weight"].dtype), p["bott.weight"], p["bott.bias"])
        if train:
            mu = h.mean(0)
            var = h.var(0, unbiased=False)
            if stats is not None:
                stats["batch_mean"], stats["batch_var"] = mu, h.var(0, unbiased=True)
        else:
            mu, var = stats["running_mean"], stats["running_var"]
        h = (h - mu) / torch.sqrt(var + self.BN_EPS) * p["bott.bn.weight"] + p["bott.bn.bias"]
        h = F.relu(h)
        if masks is not None and "bott" in masks:
            h = h * masks["bott"]
        return h
