"""Integer arithmetic analysis: bounds, modular sets and the index-expression simplifier."""

from irlab.arith.int_set import ConstIntBound, ModularSet, POS_INF, NEG_INF
from irlab.arith.analyzer import Analyzer
from irlab.arith.rewrite_rules import RULES, RULE_NAMES, Rule
from irlab.arith.canonical import Canonicalizer, Linear
