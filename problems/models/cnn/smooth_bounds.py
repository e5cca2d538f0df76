"""Certified constants of the smooth two-layer network (``networks.digits_tanh_mlp``: dense -> tanh ->
dense with softmax cross-entropy) over a ball of parameters: an upper bound on L (the largest
|eigenvalue| of the Hessian of every per-sample loss) and on the per-sample squared gradient norm.

Notation, one sample: u = (x, 1) in R^{D+1} (the flattened image and the bias input), V1 = [W1; b1]
(D+1, H), z = V1' u, h = tanh(z), hb = (h, 1), V2 = [W2; b2] (H+1, C), o = V2' hb the logits,
p = softmax(o), l = -log p_y. Gradient: g_o = p - e_y, dl/dV2 = hb g_o', g_z = (W2 g_o) * (1 - h^2),
dl/dV1 = u g_z'. Facts used: ||g_o||^2 = (1 - p_y)^2 + sum_{j != y} p_j^2 <= 2; the cross-entropy's
Hessian in o, diag(p) - p p', has ||.||_2 <= max_i 2 p_i (1 - p_i) <= 1/2 (Gershgorin); |tanh'| <= 1,
|tanh''| = |2 tanh (1 - tanh^2)| <= c2 = 4/(3 sqrt 3); ||hb|| <= sqrt(H + 1) (|h| < 1).

Hessian. Along a direction (A1, A2) of unit norm, a = ||A1||_F, b = ||A2||_F (a^2 + b^2 = 1), with
q = A1' u (||q|| <= a ||u||) and t the line parameter:
    do/dt   = A2' hb + W2' (tanh'(z) * q),                       ||do/dt|| <= sqrt(H+1) b + w ||u|| a
    d2o/dt2 = 2 A2h' (tanh'(z) * q) + W2' (tanh''(z) * q * q),   ||d2o/dt2|| <= 2 ||u|| a b + c2 w ||u||^2 a^2
(A2h = A2 without its bias row, w >= ||W2||_2, ||q * q||_2 <= ||q||_2^2), and
    d2l/dt2 = (do/dt)' (diag(p) - p p') (do/dt) + g_o' d2o/dt2,
so |d2l/dt2| <= (1/2)(sqrt(H+1) b + w ||u|| a)^2 + sqrt(2)(2 ||u|| a b + c2 w ||u||^2 a^2) = (a, b) M (a, b)'
with M = [[w^2 ||u||^2/2 + sqrt(2) c2 w ||u||^2, sqrt(H+1) w ||u||/2 + sqrt(2) ||u||], [., (H+1)/2]]
(non-negative entries), whose largest eigenvalue bounds ||Hess l||_2. It grows with w and ||u||, so the
bound over the ball ||theta - c|| <= r takes w = ||W2(c)||_2 + r and ||u|| the largest over the images;
f and every minibatch loss are means of per-sample losses, so the same L bounds them.

Gradient: ||grad l||^2 = ||hb||^2 ||g_o||^2 + ||u||^2 ||g_z||^2 <= 2 (H + 1) + 2 ||u||^2 w^2 =: G^2, an
upper bound of E||g_b||^2 for any minibatch gradient g_b (Jensen), of ||grad f||^2, and, for b rows drawn
with replacement, of b E||g_b - grad f||^2 (the variance of a mean of b independent draws is that of
one draw over b, at most its second moment).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...validation import ProblemError, check_real
from .layers import Dense, Tanh
from .network import ConvNet

__all__ = ["TANH_SECOND_DERIVATIVE", "TanhMLPBounds", "tanh_mlp_bounds"]

TANH_SECOND_DERIVATIVE = 4.0 / (3.0 * math.sqrt(3.0))
"""max |tanh''| = |2 tanh (1 - tanh^2)|, reached at tanh = 1/sqrt(3)."""


@dataclass(frozen=True)
class TanhMLPBounds:
    """Certified bounds over the ball ||theta - centre|| <= radius (module docstring): ``L`` >= ||Hess l||_2
    for every sample's loss l (so for f and every minibatch mean), ``G_sq`` >= ||grad l||^2; from
    ``w2_norm`` >= ||W2||_2 on the ball, ``input_norm`` = max ||(x, 1)|| over the images, ``hidden`` H."""

    radius: float
    w2_norm: float
    input_norm: float
    hidden: int
    L: float
    G_sq: float

    def minibatch_variance(self, batch_size: int) -> float:
        """An upper bound of E||g_b - grad f||^2 for b rows drawn with replacement: G^2 / b."""
        return self.G_sq / batch_size

    def to_json(self) -> dict[str, float]:
        return {"ball radius": self.radius, "||W2||_2 bound on the ball": self.w2_norm,
                "max ||(x, 1)||": self.input_norm, "hidden units": self.hidden, "L (certified)": self.L,
                "G^2 (certified)": self.G_sq}


def tanh_mlp_bounds(network: ConvNet, images: np.ndarray, centre: np.ndarray, radius: float) -> TanhMLPBounds:
    """The certified bounds of the module docstring for ``network`` (exactly Dense -> Tanh -> Dense) on
    ``images`` (n, H, W, C), over the ball of ``radius`` around ``centre`` (n_params,).

    Raises:
        ProblemError: naming ``network`` (another architecture), ``centre`` or ``radius``.
    """
    layers = network.layout.layers
    if len(layers) != 3 or not (isinstance(layers[0], Dense) and isinstance(layers[1], Tanh)
                                and isinstance(layers[2], Dense)):
        raise ProblemError(f"network: the bounds are derived for Dense -> Tanh -> Dense, got {network.name}")
    radius = check_real("radius", radius, 0.0)
    centre = np.asarray(centre, dtype=np.float64)
    if centre.shape != (network.n_params,) or not np.all(np.isfinite(centre)):
        raise ProblemError(f"centre: expected a finite vector of shape ({network.n_params},), got {centre.shape}")
    block = network.layout.parameter_blocks[1]
    W2 = centre[block.offset : block.offset + block.weight_size].reshape(block.weight_shape)
    w = float(np.linalg.norm(W2, 2)) + radius
    flat = np.asarray(images, dtype=np.float64).reshape(len(images), -1)
    u = float(np.sqrt(np.max(np.sum(flat * flat, axis=1)) + 1.0))
    H = layers[0].out_features
    c2 = TANH_SECOND_DERIVATIVE
    off = math.sqrt(H + 1) * w * u / 2 + math.sqrt(2) * u
    M = np.array([[w * w * u * u / 2 + math.sqrt(2) * c2 * w * u * u, off], [off, (H + 1) / 2]])
    L = float(np.linalg.eigvalsh(M)[-1])
    return TanhMLPBounds(radius, w, u, H, L, 2.0 * (H + 1) + 2.0 * u * u * w * w)
