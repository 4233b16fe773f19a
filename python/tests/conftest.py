import pytest

torch = pytest.importorskip("torch", reason="the kgen package needs torch")
