"""Package list: irlab/ plus widgets/ installed as irlab.widgets (see pyproject.toml)."""

from setuptools import find_packages, setup

widgets = ["irlab.widgets" + name[len("widgets"):]
           for name in find_packages(include=["widgets", "widgets.*"])]
setup(packages=find_packages(include=["irlab", "irlab.*"]) + widgets)
