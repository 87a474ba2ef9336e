"""Adversarial domain-adaptation losses DANN, CDAN and MDD.

For one client's minibatch B = S u T (S its source rows, T its target rows):

* L_cls = mean_{(x,y) in S} CE(zeta(x), y); absent (0) when S is empty;
* DANN: L_adv = mean_{x in B} CE(D_psi(zeta^1(x)), d(x)), d = 0 source, 1 target;
* CDAN: L_adv = mean_{x in B} CE(D_psi(softmax(zeta(x)) (x) zeta^1(x)), d(x)) (full outer
  product, gradient through the softmax, no entropy weighting);
* MDD: yhat = argmax zeta(x) (no gradient), a = softmax(A_psi(zeta^1(x))),
  t(x) = -log a[yhat] on S and -log(1 + 1e-5 - a[yhat]) on T, L_adv = mean_B t (margin 1).

MDD's terms are computed in log space, never through the probability ``a``: with ``l`` the
adversary's logits, ``-log a[yhat] = logsumexp(l) - l[yhat]`` and ``log(1 - a[yhat]) =
logsumexp_{k != yhat} l_k - logsumexp(l)``, so ``-log(1 + eps - a) = -logaddexp(log eps,
log(1 - a))``. The mathematics is that of the formula above; the numbers stay finite where the
adversary's logit gap is large (what MDD's adversary is trained to do): in float32, ``a``
underflows to 0 on a target row once the gap passes about 104, and ``1 / a`` overflows on a
source row once it passes about 89, and a loss written through ``a`` then has a NaN gradient
(``torch.where`` back-propagates ``0 * inf`` through the branch it did not select) although its
value is finite. The authors' code, and the usual implementations, compute these terms from
the logits too.

The client's local objective is f_i = L_cls - nu L_adv (eq. (2) per client, (4)); omega
minimises it and psi maximises it, i.e. psi minimises nu L_adv. :func:`objective` returns f_i;
the player gradient is ``grad f_i`` with its psi part negated.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from repro.fedmm.models import DANet

Tensor = torch.Tensor
MDD_EPS = 1e-5
LOG_MDD_EPS = math.log(MDD_EPS)


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
    return mdd_terms(net.adversary(p, z, masks), yhat, is_source).mean()


def mdd_neg_log_a(adv_logits: Tensor, yhat: Tensor) -> Tensor:
    """``-log a[yhat]`` per row, ``a = softmax(adv_logits)``, from the logits (finite for any
    finite logits: no probability is formed).
    """
    return torch.logsumexp(adv_logits, dim=1) - adv_logits.gather(1, yhat[:, None]).squeeze(1)


def mdd_terms(adv_logits: Tensor, yhat: Tensor, is_source: Tensor) -> Tensor:
    """MDD's per-row term t(x): ``-log a[yhat]`` on source rows, ``-log(1 + eps - a[yhat])``
    on target rows (module docstring), both in log space, so value and gradient are finite
    for any finite logits.
    """
    lse = torch.logsumexp(adv_logits, dim=1)
    neg_log_a = lse - adv_logits.gather(1, yhat[:, None]).squeeze(1)
    chosen = torch.arange(adv_logits.shape[1], device=yhat.device) == yhat[:, None]
    # log(1 - a[yhat]): the other classes' share; masked_fill's -inf has zero gradient
    log_rest = torch.logsumexp(adv_logits.masked_fill(chosen, float("-inf")), dim=1) - lse
    neg_log_rest = -torch.logaddexp(torch.full_like(log_rest, LOG_MDD_EPS), log_rest)
    return torch.where(is_source, neg_log_a, neg_log_rest)


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
