"""Maps the repository's top-level folders into the single `mua` import namespace."""
from setuptools import find_packages, setup

ROOTS = ("harness", "benchmarks", "training")

setup(
    packages=[f"mua.{p}" for p in find_packages(include=[f"{r}*" for r in ROOTS])],
    package_dir={f"mua.{r}": r for r in ROOTS},
    package_data={"": ["*.md", "*.json", "*.txt", "*.jinja", "*.html"],
                  # the example task pack is a folder of data and plain Python, not a package
                  "mua.benchmarks.pack": ["examples/*/*.py", "examples/*/*.json", "examples/*/*.md"]},
)
