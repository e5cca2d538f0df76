"""Type stub of problems.models.cnn: its public API (loaded lazily)."""

from .initialisation import default_init
from .layers import Conv2d, Dense, Layer, MaxPool2d, ReLU, Tanh
from .layout import NetworkLayout, ParameterBlock
from .network import ENGINES, CNNWorkspace, ConvNet
from .networks import digits_net, digits_tanh_mlp, lenet5, tutorial_cifar_net
