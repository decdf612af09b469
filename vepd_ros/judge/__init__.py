"""The built-in judge: robot_localization-compatible EKF (``ekf``), node-loop emulation (``filter``),
message layer (``measurements``), rl YAML parameters (``config``), static transforms (``transforms``),
golden-scenario runner (``golden``). No rclpy import anywhere in this package."""
