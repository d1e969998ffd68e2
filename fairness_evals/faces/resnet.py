"""ResNet-34 in plain torch, with torchvision's exact module and parameter names.

torchvision cannot be installed next to the CPU torch wheel this project uses, but FairFace's released
weights (``res34_fair_align_multi_7_20190809.pt``) are a state dict of ``torchvision.models.resnet34``
with ``fc`` replaced by ``Linear(512, 18)``. This module rebuilds that network so the state dict loads
unchanged (``load_state_dict(strict=True)``): same module tree (``conv1``, ``bn1``, ``layer1.0.conv1``,
``layer2.0.downsample.0``..., ``fc``), same shapes, same forward pass (torchvision ``BasicBlock``:
the stride sits on the first 3x3 convolution; ``downsample`` = 1x1 conv + batch norm). The tests
compare the key names and shapes with a listing produced by torchvision 0.28's own ``resnet34``.

Import cost: torch. Only :mod:`fairness_evals.faces.fairface` imports this module.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class BasicBlock(nn.Module):
    """torchvision's ``BasicBlock`` (expansion 1): two 3x3 convolutions with a residual connection."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Module):
    """torchvision's ``ResNet`` for ``BasicBlock`` (groups 1, width 64, no dilation), ``num_outputs`` logits."""

    def __init__(self, layers: tuple[int, int, int, int] = (3, 4, 6, 3), num_outputs: int = 1000) -> None:
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * BasicBlock.expansion, num_outputs)
        # torchvision's initialisation (only matters for randomly initialised models, i.e. tests).
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.constant_(module.weight, 1)
                nn.init.constant_(module.bias, 0)

    def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * BasicBlock.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * BasicBlock.expansion, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * BasicBlock.expansion),
            )
        layers: list[nn.Module] = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * BasicBlock.expansion
        layers.extend(BasicBlock(self.inplanes, planes) for _ in range(1, blocks))
        return nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet34(num_outputs: int = 1000) -> ResNet:
    """A randomly initialised ResNet-34 (blocks 3, 4, 6, 3) whose ``fc`` has ``num_outputs`` outputs."""
    return ResNet((3, 4, 6, 3), num_outputs=num_outputs)
