"""Adversarial domain-adaptation losses DANN, CDAN and MDD (specs/fedmm.md §1.1, §1.2, §3.3).

For one client's minibatch B = S u T (S its source rows, T its target rows):

* L_cls = mean_{(x,y) in S} CE(zeta(x), y); absent (0) when S is empty;
* DANN: L_adv = mean_{x in B} CE(D_psi(zeta^1(x)), d(x)), d = 0 source, 1 target;
* CDAN: L_adv = mean_{x in B} CE(D_psi(softmax(zeta(x)) (x) zeta^1(x)), d(x)) (full outer
  product, gradient through the softmax, no entropy weighting);
* MDD: yhat = argmax zeta(x) (no gradient), a = softmax(A_psi(zeta^1(x))),
  t(x) = -log a[yhat] on S and -log(1 + 1e-5 - a[yhat]) on T, L_adv = mean_B t (margin 1).

The client's local objective is f_i = L_cls - nu L_adv (eq. (2) per client, (4)); omega
minimises it and psi maximises it, i.e. psi minimises nu L_adv. :func:`objective` returns f_i;
the player gradient is ``grad f_i`` with its psi part negated.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from repro.fedmm.models import DANet

Tensor = torch.Tensor
MDD_EPS = 1e-5


def classification_loss(logits: Tensor, y: Tensor, is_source: Tensor) -> Tensor:
    """Mean CE over the source rows; 0 (with zero gradient) when there are none."""
    ce = F.cross_entropy(logits, y, reduction="none")
    w = is_source.to(logits.dtype)
    return (ce * w).sum() / w.sum().clamp(min=1.0)


def domain_loss(net: DANet, p: dict, z: Tensor, logits: Tensor, is_source: Tensor,
                masks: dict | None) -> Tensor:
    """L_adv of the network's DA method on one minibatch (mean over all rows)."""
    d = (~is_source).long()
    if net.method == "DANN":
        return F.cross_entropy(net.adversary(p, z, masks), d)
    if net.method == "CDAN":
        outer = (F.softmax(logits, dim=1).unsqueeze(2) * z.unsqueeze(1)).flatten(1)
        return F.cross_entropy(net.adversary(p, outer, masks), d)
    yhat = logits.detach().argmax(dim=1)
    a = F.softmax(net.adversary(p, z, masks), dim=1).gather(1, yhat[:, None]).squeeze(1)
    t = torch.where(is_source, -torch.log(a), -torch.log(1.0 + MDD_EPS - a))
    return t.mean()


def objective(net: DANet, nu: float, flat: Tensor, x: Tensor, y: Tensor, is_source: Tensor,
              masks: dict | None = None, mean: Tensor | None = None):
    """f_i(omega, psi; batch) = L_cls - nu L_adv, and the feature statistics (BN, Office).

    Returns ``(f, stats)``; ``stats`` is a dict (empty for the MNIST CNN).
    """
    p = net.unflatten(flat)
    stats: dict = {}
    kwargs = {"masks": masks} if hasattr(net, "feature_in") else {}
    z = net.features(p, x, mean=mean, train=True, stats=stats, **kwargs)
    logits = net.classify(p, z, masks)
    f = classification_loss(logits, y, is_source) - nu * domain_loss(net, p, z, logits,
                                                                      is_source, masks)
    return f, stats


def player_sign(net: DANet, dtype=torch.float32) -> Tensor:
    """+1 on omega coordinates, -1 on psi: G = sign * grad f (descent in omega, ascent in psi)."""
    s = net.sizes
    return torch.cat([torch.ones(s["omega"], dtype=dtype), -torch.ones(s["psi"], dtype=dtype)])
