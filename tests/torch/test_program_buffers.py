"""Buffers the program reaches without DTR (Note [Program-visible buffers]):
module inputs, aliases handed out by numpy()/storage(), and what the
package installs on a module. Each test is a way an ordinary program went
silently wrong, or failed where PyTorch does not, before the fix."""
import copy
import io
import unittest

import torch

import dtr


class _Recurrent(torch.nn.Module):  # at module level: pickled by name
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(4, 4)

    def forward(self, x):
        return self.lstm(x)[0]


class ProgramBuffersTest(unittest.TestCase):

    def tearDown(self):
        dtr.set_budget(dtr.UNLIMITED)

    def test_write_into_a_module_input_outside_dtr_is_refused_by_backward(self):
        # Linear saves its input for the weight gradient; overwriting the
        # input before backward must fail as in PyTorch, not give a
        # gradient computed from the new contents.
        def run(use_dtr):
            torch.manual_seed(0)
            m = torch.nn.Linear(4, 4)
            if use_dtr:
                dtr.checkpoint(m)
            x = torch.randn(3, 4)
            y = m(x).sum()
            with torch.no_grad():
                x.mul_(2)
            y.backward()
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace"):
            run(False)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace"):
            run(True)

    def test_numpy_alias_follows_later_writes(self):
        y = dtr.checkpoint(torch.arange(4.0)) * 2
        alias = y.numpy()
        z = y + 1  # lineage reads y's old value: the write cuts it
        y.add_(1)
        dtr.evict_all()
        self.assertEqual(alias.tolist(), [1.0, 3.0, 5.0, 7.0])
        self.assertEqual(y.tolist(), alias.tolist())
        self.assertEqual(z.tolist(), [1.0, 3.0, 5.0, 7.0])

    def test_write_through_a_view_reaches_a_numpy_alias(self):
        y = dtr.checkpoint(torch.zeros(4)) + 1
        alias = y.numpy()
        v = y[1:3]
        w = y * 3  # lineage reads the storage
        v.mul_(5)
        dtr.evict_all()
        self.assertEqual(alias.tolist(), [1.0, 5.0, 5.0, 1.0])
        self.assertEqual(w.tolist(), [3.0, 3.0, 3.0, 3.0])

    def test_numpy_of_a_tensor_requiring_grad_is_refused(self):
        m = dtr.checkpoint(torch.nn.Linear(4, 4))
        y = m(torch.randn(2, 4))
        with self.assertRaisesRegex(RuntimeError, "requires grad"):
            y.numpy()
        self.assertEqual(y.detach().numpy().shape, (2, 4))

    def test_data_of_a_leaf_input_can_be_written(self):
        class Clamp(torch.nn.Module):
            def forward(self, x):
                x.data.clamp_(-0.1, 0.1)
                return x * 2
        m = dtr.checkpoint(Clamp())
        x = torch.randn(2, 4, requires_grad=True)
        m(x).sum().backward()
        self.assertTrue(bool((x.detach().abs() <= 0.1).all()))
        self.assertTrue(torch.equal(x.grad, torch.full((2, 4), 2.0)))

    def test_in_place_reshape_of_a_module_input_is_a_clear_error(self):
        class Unsqueeze(torch.nn.Module):
            def forward(self, x):
                x.unsqueeze_(0)
                return x * 2
        m = dtr.checkpoint(Unsqueeze())
        x = torch.randn(3)
        with self.assertRaisesRegex(RuntimeError, "aten::unsqueeze_.*x.unsqueeze"):
            m(x)
        self.assertEqual(tuple(x.shape), (3,))

    def test_one_buffer_passed_twice_is_one_buffer(self):
        # m(x, x): a write through one argument cuts lineage that read the
        # other, instead of a replay refusing to run later.
        class Twice(torch.nn.Module):
            def forward(self, a, b):
                h = torch.exp(a * 2)
                b.mul_(3)
                return h, b + 1
        def run(use_dtr):
            m = Twice()
            if use_dtr:
                dtr.checkpoint(m)
            x = torch.arange(4.0)
            with torch.no_grad():
                h, c = m(x, x)
                if use_dtr:
                    dtr.evict_all()
                return dtr.decheckpoint(h * 1), dtr.decheckpoint(c), x
        for u, v in zip(run(False), run(True)):
            self.assertTrue(torch.equal(u, v))

    def test_forward_without_backward_leaves_parameter_gradients_plain(self):
        torch.manual_seed(0)
        m = dtr.checkpoint(torch.nn.Linear(4, 4))
        x = torch.randn(3, 4)
        for _ in range(20):  # graphs that die unbackpropagated
            m(x)
        for _ in range(3):
            m(x).sum().backward()
            self.assertFalse(dtr.is_checkpoint(m.weight.grad))
            self.assertFalse(dtr.is_checkpoint(m.bias.grad))

    def test_checkpointed_recurrent_modules_can_be_scripted_and_saved(self):
        torch.jit.script(_Recurrent())  # importing dtr leaves the classes alone
        torch.manual_seed(0)
        net = dtr.checkpoint(_Recurrent())
        x = torch.randn(5, 2, 4)
        expect = net(x)
        buf = io.BytesIO()
        torch.save(net, buf)
        buf.seek(0)
        loaded = torch.load(buf, weights_only=False)
        self.assertTrue(torch.equal(dtr.decheckpoint(loaded(x)),
                                    dtr.decheckpoint(expect)))
        self.assertTrue(dtr.is_checkpoint(loaded(x)))  # still installed
        clone = copy.deepcopy(net)
        self.assertIs(clone.lstm.forward.module, clone.lstm)


if __name__ == "__main__":
    unittest.main()
