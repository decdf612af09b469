"""
Package vepd_ros for colcon (ament_python) and pip.

ament_python package: builds with colcon on ROS 2 Humble/Jazzy and with `pip install .` (pip
runtime).
"""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = 'vepd_ros'

# One console script per node (so `ros2 run vepd_ros <node>` works after colcon build) and the CLI.
NODES = [
    'truth_node',
    'gps_noise_node',
    'imu_noise_node',
    'judge_node',
    'navsat_node',
    'recorder_node',
    'evaluator_node',
    'bag_player_node',
    'judge_supervisor_node',
]

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'benchmarks']),
    package_data={PACKAGE: ['io/msgdefs/*/*.msg']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE]),
        ('share/' + PACKAGE, ['package.xml']),
        ('share/' + PACKAGE + '/launch', glob('launch/*.launch.py')),
        ('share/' + PACKAGE + '/config', glob('config/*.yaml')),
    ],
    install_requires=['setuptools'],
    # colcon test runs pytest (not unittest) for a package whose test extra names it.
    extras_require={'test': ['pytest']},
    zip_safe=True,
    maintainer='vepd_ros developers',
    maintainer_email='vepd-ros@example.org',
    description='VEPD: quantify the sim2real gap of simulated GPS and IMU sensors (ROS 2).',
    license='BSD-3-Clause',
    entry_points={
        'console_scripts': [f'{n} = {PACKAGE}.nodes.{n}:main' for n in NODES]
        + [f'vepd = {PACKAGE}.cli:main'],
    },
)
