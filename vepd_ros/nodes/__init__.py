"""Thin rclpy nodes: they translate messages and parameters; all computation lives in the cores."""
