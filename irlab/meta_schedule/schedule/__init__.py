"""irlab's custom schedule rules (TVM's ``tvm.meta_schedule.schedule``): functions registered
as ``meta_schedule.<target key>.<name>`` for the blocks whose TE compute is annotated
``schedule_rule = name``; ``ms.schedule_rule.ApplyCustomRule`` calls them. Importing this
package registers them."""

from irlab.meta_schedule.schedule import cpu  # noqa: F401  (registers the "cpu" rules)
