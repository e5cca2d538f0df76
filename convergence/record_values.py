"""F(w) at the recorded global models of a run, memoised per process.

``run.run_result`` measures the gap F(w) - F* at every record point of every seed: S P evaluations of
the objective, each a pass over all its rows (on Li et al.'s Fashion-MNIST instances 54,200-62,864 rows
of 50 features and 10 classes: ~8 ms each, 1,220 per instance for li2020.schemes' 4 seeds and 61 records
of 5 runs). The same records are measured again whenever a process builds the same RunResult twice:
``fedbound verify --power`` evaluates each planted variant of a claim on its claim's runs (li2020.schemes:
3 variants, the same 80 (config, seed) records each time), and claims evaluated in one process read each
other's runs from the store (``reports.claim_pool.CHAINS``). ``record_values`` keeps the values of the last
MEMO_ENTRIES record arrays, keyed by the objective's fingerprint (``FederatedProblem.fingerprint``: its
loss, mu and data) and the SHA-256 of the records' bytes, shape and type: a hit returns the floats the
first evaluation gave, so every figure stays bit-identical; hashing ~1 MB of records costs ~1 ms.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from problems import FederatedProblem

__all__ = ["record_values", "MEMO_ENTRIES"]

MEMO_ENTRIES = 1024
"""Record arrays whose values are kept (least recently used dropped first). Each entry holds S P floats
(li2020.thm2's largest, 128 seeds x 60 records: 61 kB), so the memo stays below ~64 MB."""

_memo: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_lock = threading.Lock()


def record_values(objective: FederatedProblem, iterates: np.ndarray) -> np.ndarray:
    """F(w_{s,p}) = ``objective.objective`` at every record, shape (S, P), for iterates (S, P, d);
    read-only, and the same array for the same objective and records (module docstring)."""
    digest = hashlib.sha256(f"{iterates.shape}|{iterates.dtype.str}".encode())
    digest.update(np.ascontiguousarray(iterates).tobytes())
    key = (objective.fingerprint, digest.hexdigest())
    with _lock:
        if key in _memo:
            _memo.move_to_end(key)
            return _memo[key]
    values = np.array([[objective.objective(w) for w in seed_iterates] for seed_iterates in iterates])
    values.setflags(write=False)
    with _lock:
        _memo[key] = values
        while len(_memo) > MEMO_ENTRIES:
            _memo.popitem(last=False)
    return values
