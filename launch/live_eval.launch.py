"""Live evaluation on the vehicle (Jetson): real /fix and /imu -> judge -> recorder on the INS ->
evaluator over a rolling window of the last K runs against a stored simulated batch.
Usage: ros2 launch vepd_ros live_eval.launch.py reference_dir:=/data/vepd/Sim/ch_rw run_duration_s:=20.0

Arguments and nodes: vepd_ros/graph.py ('live_eval'); vepd run live_eval name:=value ... runs the same graph
without launch_ros.
"""
from vepd_ros.launch_support import launch_description


def generate_launch_description():
    return launch_description('live_eval')
