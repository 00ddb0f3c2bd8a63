"""The torch.Tensor methods dtr patches at import behave exactly as plain
PyTorch's for tensors that are not checkpointed: same results, same errors.
Run: see test_dtr.py."""
import copy
import io
import pickle
import unittest

import torch

import dtr
from dtr import _tensor_methods

_PATCHED = ("__repr__", "numpy", "tolist", "__reduce_ex__", "__deepcopy__",
            "new_tensor", "storage", "untyped_storage")


def _outcome(call):
    """('ok', value) or ('error', exception type, message) of call()."""
    try:
        return ("ok", call())
    except Exception as e:  # noqa: BLE001  (the error is the outcome)
        return ("error", type(e), str(e))


class PlainTensorMethodsTest(unittest.TestCase):
    def test_every_patched_method_is_known(self):
        for name in _PATCHED:
            if hasattr(torch.Tensor, name):
                self.assertIn(name, _tensor_methods._plain)
                self.assertIsNot(getattr(torch.Tensor, name),
                                 _tensor_methods._plain[name])

    def test_plain_tensors_get_the_original_results_and_errors(self):
        plain = _tensor_methods._plain
        x = torch.arange(6.0).reshape(2, 3)
        w = torch.ones(3, requires_grad=True)
        calls = {
            "repr": (lambda t: repr(t), lambda t: plain["__repr__"](t)),
            "numpy": (lambda t: t.numpy().tolist(),
                      lambda t: plain["numpy"](t).tolist()),
            "numpy_force": (lambda t: t.numpy(force=True).tolist(),
                            lambda t: plain["numpy"](t, force=True).tolist()),
            "numpy_bad_arg": (lambda t: t.numpy(True),
                              lambda t: plain["numpy"](t, True)),
            "tolist": (lambda t: t.tolist(), lambda t: plain["tolist"](t)),
            "new_tensor": (lambda t: t.new_tensor([1, 2], dtype=torch.int64),
                           lambda t: plain["new_tensor"](
                               t, [1, 2], dtype=torch.int64)),
            "new_tensor_positional_dtype": (
                lambda t: t.new_tensor([1], torch.int64),
                lambda t: plain["new_tensor"](t, [1], torch.int64)),
            "new_tensor_unknown_kwarg": (
                lambda t: t.new_tensor([1], pin_memory=False),
                lambda t: plain["new_tensor"](t, [1], pin_memory=False)),
            "storage": (lambda t: t.storage().tolist(),
                        lambda t: plain["storage"](t).tolist()),
        }
        for t in (x, w):
            for name, (patched, original) in calls.items():
                with self.subTest(call=name, requires_grad=t.requires_grad):
                    got, want = _outcome(lambda: patched(t)), \
                        _outcome(lambda: original(t))
                    if got[0] == "ok" and isinstance(got[1], torch.Tensor):
                        self.assertEqual(want[0], "ok")
                        self.assertTrue(torch.equal(got[1], want[1]))
                        self.assertEqual(got[1].dtype, want[1].dtype)
                    else:
                        self.assertEqual(got, want)

    def test_plain_tensors_pickle_and_copy_as_before(self):
        x = torch.randn(3, 4, requires_grad=True)
        self.assertEqual(type(x.__reduce_ex__(2)),
                         type(_tensor_methods._plain["__reduce_ex__"](x, 2)))
        y = pickle.loads(pickle.dumps(x))
        self.assertTrue(torch.equal(x, y))
        self.assertTrue(y.requires_grad)
        buf = io.BytesIO()
        torch.save(x, buf)
        buf.seek(0)
        self.assertTrue(torch.equal(torch.load(buf), x))
        z = copy.deepcopy(x)
        self.assertTrue(torch.equal(x, z))
        self.assertNotEqual(z.data_ptr(), x.data_ptr())
        self.assertFalse(dtr.is_checkpoint(z))


if __name__ == "__main__":
    unittest.main()
