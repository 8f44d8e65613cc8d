"""Tests named *_network run only with --network: left out of every other run, and said so."""


def pytest_addoption(parser):
    parser.addoption("--network", action="store_true", help="run the tests that need a network")


def pytest_collection_modifyitems(config, items):
    if config.getoption("network"):
        return
    dropped = [item for item in items if item.name.endswith("_network")]
    items[:] = [item for item in items if item not in dropped]
    config.hook.pytest_deselected(items=dropped)
