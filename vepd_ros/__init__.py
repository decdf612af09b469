"""vepd_ros: Velocity Estimation Performance Difference for simulated GPS and IMU sensors.

Pure cores (no ROS import): ``models``, ``judge``, ``truth``, ``metrics``, ``runs``, ``io``, ``report``,
``pipeline``. Thin rclpy fronts: ``nodes``. Command line: ``cli`` (the ``vepd`` command).
"""
__version__ = '0.1.0'
