"""Video generators (policies): the toy policy and HunyuanVideo-1.5. The contract is in `base.py`."""
