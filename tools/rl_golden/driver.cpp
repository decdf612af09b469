// Copyright 2026 vepd_ros developers
//
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file or at
// https://developers.google.com/open-source/licenses/bsd

// Golden driver: robot_localization's UNMODIFIED filter core (ekf.cpp or ukf.cpp, filter_base.cpp,
// filter_utilities.cpp, compiled beside this file by build.sh) run through the node loop the
// rl_golden README describes (ros_filter.cpp's integrateMeasurements, emulated):
//   * a measurement is delivered at the first tick >= its arrival, in (arrival, id) order; the
//     per-topic guard drops it when its stamp is earlier than the last delivered stamp of that topic;
//   * at each tick: a non-empty queue (std::priority_queue ordered by upstream's Measurement
//     comparator, so same-stamp ties pop in libstdc++ heap order as in the node) is processed up to
//     the tick; otherwise an initialised filter whose last time is sensor_timeout or more behind
//     predicts to the tick; then, once initialised, one output row.
//
// Input and output are plain text written / read by tools/rl_golden/rl_golden.py (which owns the
// rl_golden file layout, JSON and gzip):
//   driver SETUP MEASUREMENTS OUT_DIR
//   SETUP: "key value..." lines: filter (ekf|ukf), ukf_alpha, ukf_kappa, ukf_beta, first_tick_ns,
//          tick_period_ns, n_ticks, sensor_timeout_ns, initial_last_measurement_time_ns,
//          dynamic_process_noise (0|1), full_covariance_every, process_noise (225),
//          initial_covariance (225), initial_state (15)
//   MEASUREMENTS: one per line: id topic stamp_ns arrival_ns threshold u(15) z(15) R(225)
//          (threshold "max" = DBL_MAX, upstream's default)
//   OUT_DIR/updates.csv, ticks.csv, full_covariance.csv (columns of the rl_golden README).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <queue>
#include <sstream>
#include <string>
#include <vector>

#include "Eigen/Dense"
#include "rclcpp/time.hpp"
#include "robot_localization/ekf.hpp"
#include "robot_localization/filter_base.hpp"
#include "robot_localization/measurement.hpp"
#ifdef GOLDEN_WITH_UKF
#include "robot_localization/ukf.hpp"
#endif

namespace rl = robot_localization;

namespace
{

constexpr int N = 15;

// The filter with its gate decision recorded: checkMahalanobisThreshold is the core's own virtual
// hook, called by both ekf.cpp and ukf.cpp once per correct(); the base decides, this only notes it.
template<class Base>
class Recording : public Base
{
public:
  bool gate_called = false;
  bool gate_passed = true;

protected:
  bool checkMahalanobisThreshold(
    const Eigen::VectorXd & innovation, const Eigen::MatrixXd & innovation_covariance,
    const double n_sigmas) override
  {
    gate_passed = Base::checkMahalanobisThreshold(innovation, innovation_covariance, n_sigmas);
    gate_called = true;
    return gate_passed;
  }
};

struct Gate
{
  bool * called;
  bool * passed;
};

struct Input
{
  int64_t id;
  std::string topic;
  int64_t stamp_ns;
  int64_t arrival_ns;
  double threshold;
  std::vector<bool> update;
  Eigen::VectorXd z;
  Eigen::MatrixXd R;
};

[[noreturn]] void fail(const std::string & what)
{
  std::cerr << "rl_golden driver: " << what << "\n";
  std::exit(2);
}

std::map<std::string, std::vector<std::string>> read_setup(const std::string & path)
{
  std::ifstream f(path);
  if (!f) {
    fail(path + ": cannot open");
  }
  std::map<std::string, std::vector<std::string>> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream s(line);
    std::string key, v;
    if (!(s >> key)) {
      continue;
    }
    std::vector<std::string> vals;
    while (s >> v) {
      vals.push_back(v);
    }
    out[key] = vals;
  }
  return out;
}

double to_double(const std::string & s, const std::string & where)
{
  char * end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') {
    fail(where + ": not a number: " + s);
  }
  return v;
}

int64_t to_int(const std::string & s, const std::string & where)
{
  char * end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);  // NOLINT
  if (end == s.c_str() || *end != '\0') {
    fail(where + ": not an integer: " + s);
  }
  return static_cast<int64_t>(v);
}

const std::vector<std::string> & field(
  const std::map<std::string, std::vector<std::string>> & setup, const std::string & key,
  size_t n)
{
  auto it = setup.find(key);
  if (it == setup.end() || it->second.size() != n) {
    fail("setup: " + key + " needs " + std::to_string(n) + " value(s)");
  }
  return it->second;
}

Eigen::MatrixXd matrix(const std::vector<std::string> & v, const std::string & key)
{
  Eigen::MatrixXd m(N, N);
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) {
      m(i, j) = to_double(v[i * N + j], key);
    }
  }
  return m;
}

std::vector<Input> read_measurements(const std::string & path)
{
  std::ifstream f(path);
  if (!f) {
    fail(path + ": cannot open");
  }
  std::vector<Input> out;
  std::string line;
  size_t lineno = 0;
  while (std::getline(f, line)) {
    ++lineno;
    std::istringstream s(line);
    std::vector<std::string> t;
    std::string v;
    while (s >> v) {
      t.push_back(v);
    }
    if (t.empty()) {
      continue;
    }
    const std::string where = path + ":" + std::to_string(lineno);
    if (t.size() != 5 + N + N + N * N) {
      fail(where + ": expected " + std::to_string(5 + N + N + N * N) + " fields");
    }
    Input m;
    m.id = to_int(t[0], where);
    m.topic = t[1];
    m.stamp_ns = to_int(t[2], where);
    m.arrival_ns = to_int(t[3], where);
    m.threshold = t[4] == "max" ? std::numeric_limits<double>::max() : to_double(t[4], where);
    m.update.assign(N, false);
    m.z = Eigen::VectorXd(N);
    m.R = Eigen::MatrixXd(N, N);
    for (int i = 0; i < N; ++i) {
      m.update[i] = to_int(t[5 + i], where) != 0;
      m.z(i) = to_double(t[5 + N + i], where);
    }
    for (int i = 0; i < N * N; ++i) {
      m.R(i / N, i % N) = to_double(t[5 + 2 * N + i], where);
    }
    out.push_back(m);
  }
  return out;
}

void put(FILE * f, double v) {std::fprintf(f, ",%.17g", v);}

void state_row(FILE * f, rl::FilterBase & filter)
{
  const Eigen::VectorXd & x = filter.getState();
  const Eigen::MatrixXd & P = filter.getEstimateErrorCovariance();
  for (int i = 0; i < N; ++i) {
    put(f, x(i));
  }
  for (int i = 0; i < N; ++i) {
    put(f, P(i, i));
  }
  std::fputc('\n', f);
}

const char * STATES[N] = {"X", "Y", "Z", "ROLL", "PITCH", "YAW", "VX", "VY", "VZ", "VROLL",
  "VPITCH", "VYAW", "AX", "AY", "AZ"};

void state_header(FILE * f)
{
  for (const char * s : STATES) {
    std::fprintf(f, ",x_%s", s);
  }
  for (const char * s : STATES) {
    std::fprintf(f, ",p_%s", s);
  }
  std::fputc('\n', f);
}

FILE * open_out(const std::string & path)
{
  FILE * f = std::fopen(path.c_str(), "w");
  if (!f) {
    fail(path + ": cannot write");
  }
  return f;
}

int run(rl::FilterBase & filter, Gate gate, const std::map<std::string,
  std::vector<std::string>> & setup, const std::vector<Input> & inputs, const std::string & out)
{
  const int64_t first_tick = to_int(field(setup, "first_tick_ns", 1)[0], "first_tick_ns");
  const int64_t period = to_int(field(setup, "tick_period_ns", 1)[0], "tick_period_ns");
  const int64_t n_ticks = to_int(field(setup, "n_ticks", 1)[0], "n_ticks");
  const int64_t timeout_ns = to_int(field(setup, "sensor_timeout_ns", 1)[0], "sensor_timeout_ns");
  const int64_t every = to_int(field(setup, "full_covariance_every", 1)[0], "full_covariance_every");

  filter.setProcessNoiseCovariance(matrix(field(setup, "process_noise", N * N), "process_noise"));
  filter.setEstimateErrorCovariance(
    matrix(field(setup, "initial_covariance", N * N), "initial_covariance"));
  Eigen::VectorXd x0(N);
  const auto & xs = field(setup, "initial_state", N);
  for (int i = 0; i < N; ++i) {
    x0(i) = to_double(xs[i], "initial_state");
  }
  filter.setState(x0);
  filter.setUseDynamicProcessNoiseCovariance(
    to_int(field(setup, "dynamic_process_noise", 1)[0], "dynamic_process_noise") != 0);
  filter.setSensorTimeout(rclcpp::Duration::from_nanoseconds(timeout_ns));
  filter.setLastMeasurementTime(rclcpp::Time(
      to_int(field(setup, "initial_last_measurement_time_ns", 1)[0], "initial_last_time")));

  // Delivery order: (arrival, id).
  std::vector<size_t> order(inputs.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return inputs[a].arrival_ns != inputs[b].arrival_ns ?
      inputs[a].arrival_ns < inputs[b].arrival_ns : inputs[a].id < inputs[b].id;
    });
  std::map<const rl::Measurement *, int64_t> id_of;
  std::vector<rl::MeasurementPtr> owned;
  std::priority_queue<rl::MeasurementPtr, std::vector<rl::MeasurementPtr>, rl::Measurement> queue;
  std::map<std::string, int64_t> last_stamp;

  FILE * fu = open_out(out + "/updates.csv");
  FILE * ft = open_out(out + "/ticks.csv");
  FILE * fc = open_out(out + "/full_covariance.csv");
  std::fprintf(fu, "id,tick_ns,status,last_measurement_time_ns");
  state_header(fu);
  std::fprintf(ft, "tick_ns,stamp_ns,timeout_predict");
  state_header(ft);
  std::fprintf(fc, "tick_ns");
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) {
      std::fprintf(fc, ",P_%d_%d", i, j);
    }
  }
  std::fputc('\n', fc);

  size_t next = 0;
  int64_t dropped = 0;
  for (int64_t k = 0; k < n_ticks; ++k) {
    const int64_t tick = first_tick + k * period;
    const rclcpp::Time now(tick);
    for (; next < order.size() && inputs[order[next]].arrival_ns <= tick; ++next) {
      const Input & in = inputs[order[next]];
      auto seen = last_stamp.find(in.topic);
      if (seen != last_stamp.end() && in.stamp_ns < seen->second) {
        ++dropped;
        continue;
      }
      last_stamp[in.topic] = in.stamp_ns;
      auto m = std::make_shared<rl::Measurement>();
      m->time_ = rclcpp::Time(in.stamp_ns);
      m->topic_name_ = in.topic;
      m->update_vector_ = in.update;
      m->measurement_ = in.z;
      m->covariance_ = in.R;
      m->mahalanobis_thresh_ = in.threshold;
      m->latest_control_ = Eigen::VectorXd::Zero(6);
      id_of[m.get()] = in.id;
      owned.push_back(m);
      queue.push(m);
    }
    bool timeout = false;
    if (!queue.empty()) {
      while (!queue.empty()) {
        rl::MeasurementPtr m = queue.top();
        if (m->time_ > now) {
          break;
        }
        queue.pop();
        const bool was_init = filter.getInitializedStatus();
        *gate.called = false;
        *gate.passed = true;
        filter.processMeasurement(*m);
        const int status = !was_init ? 2 : (*gate.called && !*gate.passed ? 0 : 1);
        std::fprintf(
          fu, "%lld,%lld,%d,%lld", static_cast<long long>(id_of[m.get()]),  // NOLINT
          static_cast<long long>(tick), status,  // NOLINT
          static_cast<long long>(filter.getLastMeasurementTime().nanoseconds()));  // NOLINT
        state_row(fu, filter);
      }
    } else if (filter.getInitializedStatus()) {
      const rclcpp::Duration behind = now - filter.getLastMeasurementTime();
      if (behind >= filter.getSensorTimeout()) {
        filter.predict(now, behind);
        filter.setLastMeasurementTime(now);
        timeout = true;
      }
    }
    if (filter.getInitializedStatus()) {
      std::fprintf(
        ft, "%lld,%lld,%d", static_cast<long long>(tick),  // NOLINT
        static_cast<long long>(filter.getLastMeasurementTime().nanoseconds()),  // NOLINT
        timeout ? 1 : 0);
      state_row(ft, filter);
      if ((every > 0 && k % every == 0) || k == n_ticks - 1) {
        std::fprintf(fc, "%lld", static_cast<long long>(tick));  // NOLINT
        const Eigen::MatrixXd & P = filter.getEstimateErrorCovariance();
        for (int i = 0; i < N; ++i) {
          for (int j = 0; j < N; ++j) {
            put(fc, P(i, j));
          }
        }
        std::fputc('\n', fc);
      }
    }
  }
  std::fclose(fu);
  std::fclose(ft);
  std::fclose(fc);
  std::cerr << "rl_golden driver: " << inputs.size() << " measurements, " << dropped
            << " dropped by the per-topic stamp guard, " << queue.size() << " still queued\n";
  return 0;
}

}  // namespace

int main(int argc, char ** argv)
{
  if (argc != 4) {
    std::cerr << "usage: driver SETUP MEASUREMENTS OUT_DIR\n";
    return 2;
  }
  const auto setup = read_setup(argv[1]);
  const auto inputs = read_measurements(argv[2]);
  const std::string kind = field(setup, "filter", 1)[0];
  if (kind == "ekf") {
    Recording<rl::Ekf> filter;
    return run(filter, Gate{&filter.gate_called, &filter.gate_passed}, setup, inputs, argv[3]);
  }
#ifdef GOLDEN_WITH_UKF
  if (kind == "ukf") {
    Recording<rl::Ukf> filter;
    filter.setConstants(
      to_double(field(setup, "ukf_alpha", 1)[0], "ukf_alpha"),
      to_double(field(setup, "ukf_kappa", 1)[0], "ukf_kappa"),
      to_double(field(setup, "ukf_beta", 1)[0], "ukf_beta"));
    return run(filter, Gate{&filter.gate_called, &filter.gate_passed}, setup, inputs, argv[3]);
  }
#endif
  fail("setup: filter must be ekf" + std::string(
#ifdef GOLDEN_WITH_UKF
      " or ukf"
#endif
      "") + ", got " + kind);
}
