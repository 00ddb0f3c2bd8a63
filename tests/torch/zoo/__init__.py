"""Model-zoo differential test of the dtr package: ordinary PyTorch training
programs (torchvision classifiers, recurrent nets, attention, common training
habits) run in plain PyTorch and under DTR at budgets of 0.5 and 0.3 of the
unbudgeted DTR peak, compared bitwise. See harness.py (the runner) and
cases.py (the programs). Entry points: tests/torch/test_zoo.py (unittest) and
bench/torch/zoo_table.py (Markdown table)."""
