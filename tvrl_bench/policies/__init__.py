"""Video generators (policies). Importing this package registers every policy."""

from tvrl_bench.policies import toy  # noqa: F401,E402  (registers policies.toy)
from tvrl_bench.policies import hunyuan_video15  # noqa: F401,E402  (registers policies.hunyuan_video15)
