"""Cost models (TVM's ``ms.cost_model``): score candidates before they are measured."""

from irlab.meta_schedule.cost_model.cost_model import CostModel, RandomModel
from irlab.meta_schedule.cost_model.xgb_model import XGBConfig, XGBModel

__all__ = ["CostModel", "RandomModel", "XGBConfig", "XGBModel"]
