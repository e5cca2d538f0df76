"""The model's pieces of the one local-SGD round loop (``local_sgd``): what a linear model and a
network do differently inside FedAvg's round (Li et al., ICLR 2020, Sec. 2).

The loop (``local_sgd._local_sgd``) is the model-free part: the round's sample of clients with
multiplicities c_k and coefficients a_k, b (``participation.sample_round``), the server step
W <- W + s (W' - W) with W' = b W + sum_k a_k W_k, the divergence test, the tracked maxima and the
records. Four pieces depend on how the clients' data and models are stored:

* ``client_workspace(clients, plan, W, w_star, threads)``: the model's scratch for one run (a flat
  tuple of arrays, one row per thread where clients run in parallel);
* ``begin_round(clients, work, W, w_star, track, broadcast, acc)``: before the round's clients run,
  from the global model W (d,) in the problem's dtype; ``acc`` (d,) float64 receives W' (the
  model may start it here as b W);
* ``round_clients(r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients,
  step_scales, W, w_star, track, work, client_stats, acc)``: every sampled client's (c_k > 0) E
  local steps of round r from W, one client after another in index order,
  W_k <- W_k - eta_t lambda_k (g_k(W_k) + ...) with the algorithm's correction
  (``round_state.correct_gradient`` after each step's gradient, ``end_client`` after the E steps),
  each writing [max ||w - w*||^2, max ||g||^2] over its iterates into client_stats[k] (zeros
  unless ``track``);
* ``client_round(k, r, ..., client_stats, acc, thread)`` (the same arguments, k first and the
  thread's row of the scratch last): one client's steps, the body of the threaded kernel's
  parallel loop over the round's clients (which only linear models run: a CNN runs serially). The serial
  loop is a piece of its own so that the model reads its workspace out of the tuple once a round,
  not once a client (each array read out of a tuple costs a reference-count increment and
  decrement: W1's kernel ran 8% slower than with the loop written out when it was once a
  client, 4% with it once a round, measured in-process);
* ``aggregate(clients, work, counts, coefficients, broadcast, W, acc)``: after every client ran,
  complete acc = W' = b W + sum_k a_k W_k, summed in float64 in client order.

They are stub functions resolved at compile time by the type of the client-data bundle
(``numba.extending.overload``, the technique of ``round_state``): ``packing.PackedClients`` (a
linear model's support-restricted rows, ``linear_rounds``) or ``network_rounds.NetworkClients``
(a CNN's images and its network's buffers). The loop is compiled (and cached) once per bundle
type; no jitted function travels as an argument, which would defeat Numba's cache.
"""

from __future__ import annotations

__all__ = ["aggregate", "begin_round", "client_round", "client_workspace", "round_clients"]


def client_workspace(clients, plan, W, w_star, threads):  # a stub: the overloads implement it
    """The model's scratch for one run (module docstring)."""
    raise TypeError("client_workspace runs compiled only: an overload for the bundle's type implements it")


def begin_round(clients, work, W, w_star, track, broadcast, acc):
    """The model's work before a round's clients run (module docstring)."""
    raise TypeError("begin_round runs compiled only: an overload for the bundle's type implements it")


def round_clients(r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients, step_scales, W,
                  w_star, track, work, client_stats, acc):
    """Every sampled client's E local steps of round r, in client order (module docstring)."""
    raise TypeError("round_clients runs compiled only: an overload for the bundle's type implements it")


def client_round(k, r, loss, clients, schedule, plan, algorithm_state, key, counts, coefficients, step_scales, W,
                 w_star, track, work, client_stats, acc, thread):
    """Client k's E local steps of round r (module docstring)."""
    raise TypeError("client_round runs compiled only: an overload for the bundle's type implements it")


def aggregate(clients, work, counts, coefficients, broadcast, W, acc):
    """The server's aggregate W' of the round into acc (module docstring)."""
    raise TypeError("aggregate runs compiled only: an overload for the bundle's type implements it")
