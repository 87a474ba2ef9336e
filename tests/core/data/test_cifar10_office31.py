"""CIFAR-10 and Office-31 loaders on small files written in the exact upstream layouts."""

from __future__ import annotations

import io
import pickle
import re
import struct

import numpy as np
import pytest
from PIL import Image

from repro.core.data import DataFileMissing, load_cifar10, load_office31, load_office31_images
from repro.core.data.cifar10 import read_batch

LABEL_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
               "truck"]
PER_BATCH = 10


class _Py2Pickler(pickle._Pickler):
    """Protocol-2 pickler that writes ``str`` and ``bytes`` as Python 2 ``str`` (BINSTRING).

    The upstream batches were written by Python 2's cPickle, whose strings load as ``bytes``
    under ``encoding="bytes"``; this reproduces that opcode stream.
    """

    dispatch = dict(pickle._Pickler.dispatch)

    def _save_py2_str(self, obj):
        raw = obj.encode("latin1") if isinstance(obj, str) else obj
        if len(raw) < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([len(raw)]) + raw)
        else:
            self.write(pickle.BINSTRING + struct.pack("<i", len(raw)) + raw)
        self.memoize(obj)

    dispatch[str] = _save_py2_str
    dispatch[bytes] = _save_py2_str


def py2_pickle(obj) -> bytes:
    buf = io.BytesIO()
    _Py2Pickler(buf, protocol=2).dump(obj)
    # numpy 1.x (upstream's) module path of the array reconstructor.
    return buf.getvalue().replace(b"numpy._core.multiarray", b"numpy.core.multiarray")


def write_cifar10(folder, seed=0):
    """Write data_batch_1..5, test_batch (10 images each) and batches.meta; return the arrays."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    written = {}
    for i, name in enumerate([f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]):
        data = rng.integers(0, 256, size=(PER_BATCH, 3072), dtype=np.uint8)
        labels = [int(v) for v in rng.integers(0, 10, size=PER_BATCH)]
        batch = {
            b"batch_label": f"batch {i + 1} of 6".encode(),
            b"labels": labels,
            b"data": data,
            b"filenames": [f"img_{i}_{j}.png".encode() for j in range(PER_BATCH)],
        }
        (folder / name).write_bytes(py2_pickle(batch))
        written[name] = (data, labels)
    meta = {b"num_cases_per_batch": PER_BATCH, b"label_names": [n.encode() for n in LABEL_NAMES],
            b"num_vis": 3072}
    (folder / "batches.meta").write_bytes(py2_pickle(meta))
    return written


@pytest.fixture(scope="module")
def cifar(tmp_path_factory):
    parent = tmp_path_factory.mktemp("cifar")
    written = write_cifar10(parent / "cifar-10-batches-py")
    return parent, written


def test_cifar10_reads_back_pixels_and_labels(cifar):
    parent, written = cifar
    train = load_cifar10(parent, "train")
    assert train.X.shape == (50, 32, 32, 3) and train.X.dtype == np.uint8
    assert train.y.dtype == np.uint8
    data = np.concatenate([written[f"data_batch_{k}"][0] for k in range(1, 6)])
    labels = sum((written[f"data_batch_{k}"][1] for k in range(1, 6)), [])
    assert train.y.tolist() == labels
    # Pixel (r, c) of channel ch is byte ch*1024 + r*32 + c of the image's row.
    for i, r, c, ch in [(0, 0, 0, 0), (7, 31, 0, 1), (23, 5, 17, 2), (49, 31, 31, 2)]:
        assert train.X[i, r, c, ch] == data[i, ch * 1024 + r * 32 + c]
    np.testing.assert_array_equal(train.X.transpose(0, 3, 1, 2).reshape(50, 3072), data)
    assert train.meta["label_names"] == LABEL_NAMES
    assert train.meta["filenames"][:2] == ["img_0_0.png", "img_0_1.png"]
    assert train.meta["checksum"] == "none"

    test = load_cifar10(parent / "cifar-10-batches-py", "test")
    assert test.X.shape == (10, 32, 32, 3)
    np.testing.assert_array_equal(test.X.transpose(0, 3, 1, 2).reshape(10, 3072),
                                  written["test_batch"][0])
    assert test.y.tolist() == written["test_batch"][1]


def test_cifar10_from_env_and_cache(cifar, monkeypatch, tmp_path):
    parent, written = cifar
    monkeypatch.setenv("FEDREPRO_CIFAR10", str(parent))
    assert load_cifar10(split="test").y.tolist() == written["test_batch"][1]
    monkeypatch.delenv("FEDREPRO_CIFAR10")
    monkeypatch.setenv("FEDREPRO_CACHE", str(tmp_path))
    write_cifar10(tmp_path / "cifar10" / "cifar-10-batches-py", seed=1)
    assert load_cifar10(split="test").X.shape == (10, 32, 32, 3)


def test_cifar10_also_reads_python3_pickles(tmp_path):
    data = np.arange(2 * 3072, dtype=np.uint64).astype(np.uint8).reshape(2, 3072)
    for protocol in (2, 4, 5):
        path = tmp_path / f"batch_{protocol}"
        path.write_bytes(pickle.dumps({b"data": data, b"labels": [3, 1]}, protocol=protocol))
        batch = read_batch(path)
        np.testing.assert_array_equal(batch[b"data"], data)
        assert batch[b"labels"] == [3, 1]


def test_cifar10_refuses_foreign_pickle(tmp_path):
    path = tmp_path / "evil"
    path.write_bytes(b"cos\nsystem\n(S'echo hi'\ntR.")
    with pytest.raises(pickle.UnpicklingError, match="refusing global os.system"):
        read_batch(path)


def test_cifar10_missing_names_every_place(monkeypatch, tmp_path):
    env = tmp_path / "env"
    monkeypatch.setenv("FEDREPRO_CIFAR10", str(env))
    monkeypatch.setenv("FEDREPRO_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DataFileMissing) as info:
        load_cifar10()
    message = str(info.value)
    assert str(env) in message
    assert str(env / "cifar-10-batches-py") in message
    assert str(tmp_path / "cache" / "cifar10" / "cifar-10-batches-py") in message
    assert "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz" in message

    monkeypatch.delenv("FEDREPRO_CIFAR10")
    with pytest.raises(DataFileMissing, match=r"\$FEDREPRO_CIFAR10: not set"):
        load_cifar10(split="test")
    with pytest.raises(DataFileMissing, match=re.escape(f"root: {tmp_path / 'nowhere'}")):
        load_cifar10(tmp_path / "nowhere")


# --- office-31 --------------------------------------------------------------------------------

CLASSES = ["back_pack", "bike", "calculator"]
# Images per class and domain; colours are solid so JPEG decodes them almost exactly.
LAYOUT = {"amazon": [2, 1, 3], "webcam": [1, 2, 1]}
SIDE = 16


def _colour(domain: int, label: int, k: int) -> tuple[int, int, int]:
    return (40 + 80 * domain, 30 + 90 * label, 20 + 60 * k)


@pytest.fixture(scope="module")
def office(tmp_path_factory):
    root = tmp_path_factory.mktemp("office31")
    for d, (domain, counts) in enumerate(LAYOUT.items()):
        for label, (name, count) in enumerate(zip(CLASSES, counts, strict=True)):
            folder = root / domain / "images" / name
            folder.mkdir(parents=True)
            for k in range(count):
                image = Image.new("RGB", (SIDE, SIDE), _colour(d, label, k))
                image.save(folder / f"frame_{k:04d}.jpg", quality=95)
    return root


def test_office31_paths_and_labels(office):
    amazon = load_office31("amazon", office)
    assert amazon.meta["class_names"] == CLASSES
    assert amazon.y.tolist() == [0, 0, 1, 2, 2, 2]
    assert [p.parent.name for p in amazon.X] == ["back_pack"] * 2 + ["bike"] + ["calculator"] * 3
    assert [p.name for p in amazon.X[:2]] == ["frame_0000.jpg", "frame_0001.jpg"]
    webcam = load_office31("webcam", office)
    assert webcam.y.tolist() == [0, 1, 1, 2]
    assert webcam.meta["class_names"] == CLASSES


def test_office31_images(office):
    webcam = load_office31("webcam", office)
    images = load_office31_images(webcam.X, size=SIDE)
    assert images.shape == (4, SIDE, SIDE, 3) and images.dtype == np.uint8
    for image, path in zip(images, webcam.X, strict=True):
        with Image.open(path) as img:
            np.testing.assert_array_equal(image, np.asarray(img.convert("RGB")))
    expected = [_colour(1, 0, 0), _colour(1, 1, 0), _colour(1, 1, 1), _colour(1, 2, 0)]
    assert np.abs(images.astype(int) - np.array(expected)[:, None, None, :]).max() <= 3
    small = load_office31_images(webcam.X[:1], size=4)
    assert small.shape == (1, 4, 4, 3)
    assert np.abs(small.astype(int) - np.array(expected[0])).max() <= 3


def test_office31_missing_names_every_place(office, monkeypatch, tmp_path):
    with pytest.raises(DataFileMissing, match=re.escape(f"root: {office / 'dslr' / 'images'}")):
        load_office31("dslr", office)
    env = tmp_path / "env"
    monkeypatch.setenv("FEDREPRO_OFFICE31", str(env))
    monkeypatch.setenv("FEDREPRO_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DataFileMissing) as info:
        load_office31("amazon")
    message = str(info.value)
    assert str(env / "amazon" / "images") in message
    assert str(tmp_path / "cache" / "office31" / "amazon" / "images") in message
    assert "https://faculty.cc.gatech.edu/~judy/domainadapt/" in message
    monkeypatch.setenv("FEDREPRO_OFFICE31", str(office))
    assert load_office31("amazon").y.tolist() == [0, 0, 1, 2, 2, 2]
