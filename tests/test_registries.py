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
    # members a test registered from its own module (a test workload) are not the package's
    own = [c for c in registry.classes() if c.__module__.startswith(f"{package.__name__}.")]
    assert registry.module_names() == sorted(c.name for c in own)
    for cls in own:
        assert cls.__module__ == f"{package.__name__}.{cls.name}"
