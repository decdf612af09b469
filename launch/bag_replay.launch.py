"""Bag replay: ros2 bag play (with its clock) -> judge -> recorder on the INS topic -> evaluator.
Usage: ros2 launch vepd_ros bag_replay.launch.py bag:=real_lot17_1 reference_dir:=vepd_out/Sim/ch_rw

Arguments and nodes: vepd_ros/graph.py ('bag_replay'); vepd run bag_replay name:=value ... runs the same graph
without launch_ros.
"""
from vepd_ros.launch_support import launch_description


def generate_launch_description():
    return launch_description('bag_replay')
