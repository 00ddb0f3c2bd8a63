"""What the parent and each run of dtr.compare share: how the user's
function is found, and the tag of the one line a run reports on."""
import importlib

RESULT_TAG = "DTR_COMPARE_RESULT "


def load(spec):
    """FUNCTION of MODULE for "MODULE:FUNCTION"; ValueError naming what is
    missing."""
    module_name, sep, function_name = spec.partition(":")
    if not sep or not module_name or not function_name:
        raise ValueError(f"expected MODULE:FUNCTION, got {spec!r}")
    module = importlib.import_module(module_name)
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ValueError(f"{module_name} has no function {function_name!r}")
    return function
