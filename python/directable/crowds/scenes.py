"""The paper's crowd scenes and metrics (``directable.experiments.crowds``):
``lanes``, ``vortex``, ``armies``, ``quad``, ``city``, ``evacuation``,
``saucer``, ``lane_index``, ``angular_momentum``, ... (see that module)."""
from ..experiments.crowds import *  # noqa: F401,F403
from ..experiments.crowds import __all__  # noqa: F401
