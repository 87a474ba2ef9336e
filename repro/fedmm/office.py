"""Office-31 path of paper 004 (spec §3.2, §4.2, §11 "reduced"): frozen MobileNetV2 features,
then federated training of bottleneck + label predictor + adversarial head.

[DEV] The backbone is frozen (features computed once, eval mode, centre crop, no augmentation)
and is MobileNetV2 width 1.0 (1280-d) instead of 1.4 (1792-d): only those weights exist here.
Office-31 itself is not in the mirror; :func:`repro.core.data.office31.load_office31` raises
``DataFileMissing`` and the runner records the cell as ``not_run`` with that reason.
"""

from __future__ import annotations

import hashlib

import numpy as np
import torch

from repro.core.data.office31 import load_office31, load_office31_images
from repro.core.data.store import cache_dir
from repro.fedmm.clients import allocate_two_clients
from repro.fedmm.mobilenetv2 import FEATURE_DIM, centre_crop, extract_features, load_pretrained
from repro.fedmm.models import OfficeHeads
from repro.fedmm.problem import DAProblem
from repro.fedmm.training import NU, RunSpec, checkpoint_path, stream_seed, summary_metrics, train

DOMAIN = {"A": "amazon", "D": "dslr", "W": "webcam"}
TASKS = ("A->W", "D->W", "W->D", "A->D", "D->A", "W->A")


def office_features(domain: str, image_size: int = 224) -> tuple[np.ndarray, np.ndarray]:
    """(features float32 (n, 1280), labels int64) of one domain, cached by file list."""
    ds = load_office31(domain)
    ident = hashlib.sha256("\n".join(f"{p}:{p.stat().st_size}" for p in ds.X).encode())
    path = (cache_dir() / "fedmm" /
            f"office31_{domain}_{image_size}_{ident.hexdigest()[:16]}.npy")
    if path.is_file():
        return np.load(path), ds.y
    resize = round(image_size * 256 / 224)
    model = load_pretrained()
    feats = []
    for k in range(0, len(ds.X), 64):
        imgs = load_office31_images(ds.X[k:k + 64], size=resize)
        feats.append(extract_features(model, centre_crop(imgs, image_size)))
    F = np.concatenate(feats) if feats else np.zeros((0, FEATURE_DIM), np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, F)
    return F, ds.y


def run_office_cell(config: dict, ctx) -> dict:
    """Train one (task, algorithm, DA method) cell; returns the metrics dict."""
    src, tgt = (DOMAIN[s] for s in config["task"].split("->"))
    size = config.get("image_size", 224)
    xs, ys = office_features(src, size)
    xt, yt = office_features(tgt, size)
    da, seed = config["da"], config["seed"]
    net = OfficeHeads(da, feature_in=xs.shape[1], n_classes=int(max(ys.max(), yt.max()) + 1))
    clients = allocate_two_clients(len(xs), len(xt), 1.0)
    base = ("office", config["task"], da, seed)
    rngs = [(np.random.default_rng(stream_seed(*base, "batches", i, "source")),
             np.random.default_rng(stream_seed(*base, "batches", i, "target")))
            for i in range(2)]
    gens = [torch.Generator().manual_seed(stream_seed(*base, "dropout", i)) for i in range(2)]
    xs_t, xt_t = torch.from_numpy(xs), torch.from_numpy(xt)
    problem = DAProblem(net, NU["office"][da], clients, xs_t, torch.from_numpy(ys), xt_t,
                        config["batch"], rngs, gens)
    theta0 = net.init(torch.Generator().manual_seed(stream_seed(*base, "init")))
    yt_t = torch.from_numpy(yt)
    spec = RunSpec(config["algorithm"], config["rounds"], config["local_steps"],
                   config["eval_every"])
    train(problem, net, "office", spec, theta0,
          lambda th: problem.accuracy(th, xt_t, yt_t), ctx,
          checkpoint_path(ctx.experiment, ctx.seed))
    return summary_metrics(ctx.curves["round"], ctx.curves["acc"])
