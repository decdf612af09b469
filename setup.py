"""
Package vepd_ros for colcon (ament_python) and pip.

ament_python package: builds with colcon on ROS 2 Humble/Jazzy and with `pip install .` (pip
runtime).
"""

from glob import glob
import os
import shutil

from setuptools import find_packages, setup
from setuptools.command.develop import develop
from setuptools.command.install import install

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

# The CLI every README command and help example calls as `vepd`. colcon (ament_python) installs
# console scripts into <prefix>/lib/vepd_ros/ (setup.cfg), where `ros2 run` finds them but a shell
# does not; `source install/setup.bash` puts <prefix>/bin on PATH. So an install whose scripts go
# to lib/<package>/ also gets `vepd` in <prefix>/bin: the same generated launcher, copied. A pip
# install (scripts already in bin/) is left as it is.
CLI = 'vepd'


def _cli_into_bin(cmd, scripts_dir: str) -> list:
    """Copy the ``vepd`` launcher from ``scripts_dir`` (<prefix>/lib/vepd_ros) to <prefix>/bin."""
    src = os.path.join(scripts_dir, CLI)
    if os.path.basename(os.path.normpath(scripts_dir)) != PACKAGE or not os.path.isfile(src):
        return []
    bin_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.normpath(scripts_dir))), 'bin')
    dst = os.path.join(bin_dir, CLI)
    cmd.mkpath(bin_dir)
    if os.path.lexists(dst):
        os.remove(dst)
    shutil.copy2(src, dst)
    return [dst]


class InstallWithCli(install):
    """``setup.py install`` (colcon build): the scripts, then ``vepd`` into <prefix>/bin too."""

    def run(self):
        super().run()
        self._cli = _cli_into_bin(self, self.install_scripts)
        if self.record and self._cli:
            with open(self.record, 'a', encoding='utf-8') as f:
                f.writelines(path + '\n' for path in self._cli)

    def get_outputs(self):
        return super().get_outputs() + getattr(self, '_cli', [])


class DevelopWithCli(develop):
    """``setup.py develop`` (colcon build --symlink-install): likewise."""

    def install_wrapper_scripts(self, dist):
        super().install_wrapper_scripts(dist)
        _cli_into_bin(self, self.script_dir)


setup(
    name=PACKAGE,
    cmdclass={'install': InstallWithCli, 'develop': DevelopWithCli},
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
