"""Walking two hierarchies: simultaneous descent, breadth-first queue, OAABB, double box."""
