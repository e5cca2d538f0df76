"""Type stub of problems.models: its public API (loaded lazily)."""

from .cnn import ConvNet, digits_net, lenet5, tutorial_cifar_net
from .kernels import margin_loss_sum, margin_residuals, register_loss
from .least_squares import LeastSquaresModel
from .linear import CurvatureBounds, LinearModel
from .logistic import LogisticModel
from .registry import MODEL_NAMES, NETWORK_NAMES, model_for, network_for
from .softmax import SoftmaxModel
