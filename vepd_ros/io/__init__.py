"""Real-data input/output: ROS 1/2 bags (rosbags), INS truth adapters, splitting, topic profiles.

No rclpy here: messages are rosbags dataclasses with the ROS field names, which the judge's message
layer accepts as duck-typed ROS messages.
"""
