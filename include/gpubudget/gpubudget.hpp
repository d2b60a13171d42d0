// gpubudget/gpubudget.hpp — everything: describe a model, budget it, check it, print it.
#pragma once
#include <gpubudget/units.hpp>
#include <gpubudget/shape.hpp>
#include <gpubudget/layer.hpp>
#include <gpubudget/layers.hpp>
#include <gpubudget/graph.hpp>
#include <gpubudget/training.hpp>
#include <gpubudget/devices.hpp>
#include <gpubudget/budget.hpp>
#include <gpubudget/budget_of.hpp>
#include <gpubudget/check.hpp>
#include <gpubudget/report.hpp>
#include <gpubudget/timeline.hpp>
#include <gpubudget/svg.hpp>
