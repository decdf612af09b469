"""Simulation: truth -> GPS/IMU noise models -> judge -> recorder -> evaluator, one chain per model.
Usage: ros2 launch vepd_ros sim_judge.launch.py models:=ch_gauss,ch_rw k:=10 time_scale:=5.0
       judge:=robot_localization (default where installed) | builtin; use_truth_node:=false with a simulator.

Arguments and nodes: vepd_ros/graph.py ('sim_judge'); vepd run sim_judge name:=value ... runs the same graph
without launch_ros.
"""
from vepd_ros.launch_support import launch_description


def generate_launch_description():
    return launch_description('sim_judge')
