"""Building hierarchies: top-down and bottom-up BVH builds, split rules, refit, R-trees."""
