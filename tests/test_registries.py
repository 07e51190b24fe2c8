"""Registry.module_names lists a package instead of importing it: true only where each
member registers under its module's name, which these registries promise."""

import pytest

import analysis.campaign.backends
import analysis.campaign.workloads
import analysis.parsers
import analysis.stats.methods


@pytest.mark.parametrize("package", [analysis.parsers, analysis.campaign.backends,
                                     analysis.campaign.workloads, analysis.stats.methods],
                         ids=lambda p: p.__name__)
def test_each_member_is_named_as_its_module(package):
    registry = package._registry
    assert registry.module_names() == registry.names()
    for cls in registry.classes():
        assert cls.__module__ == f"{package.__name__}.{cls.name}"
