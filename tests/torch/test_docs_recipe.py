"""Keeps docs/new-operator.md true: runs its Python block."""
import os
import re
import unittest

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "docs", "new-operator.md")


class RecipeTest(unittest.TestCase):
    def test_the_recipe_check_runs(self):
        with open(DOC) as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        self.assertEqual(len(blocks), 1, "one runnable block expected")
        exec(compile(blocks[0], DOC, "exec"), {"__name__": "recipe"})


if __name__ == "__main__":
    unittest.main()
