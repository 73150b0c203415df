"""Feature extractors (TVM's ``ms.feature_extractor``): numbers a cost model learns from."""

from irlab.meta_schedule.feature_extractor.per_store_feature import PerStoreFeature

__all__ = ["PerStoreFeature"]
