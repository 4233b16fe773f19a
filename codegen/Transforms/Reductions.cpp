//===- Reductions.cpp - A row's reductions over its threads ---------------===//
//
// A thread reduces its chunks of the row to a partial; partials cross the
// row's threads by xor shuffles within a warp, then through shared memory
// (or a cluster's, ClusterReduce.cpp) across warps. A partial is one value,
// or for `sqdev` three: the count, sum and sum of squared deviations from
// their mean of the elements it covers, merged pairwise (Chan, Golub and
// LeVeque); for `expsum` two: the elements' max and the sum of their
// exponentials less it, merged by rescaling to the larger max (the online
// softmax). Counts known when the IR is built (every thread's chunks inside
// the row) stay constants: their arithmetic folds, they are not shuffled
// and no division is left but by constants.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/RowLowering.h"

using namespace mlir;
using namespace mlir::kgen;

Value RowLowering::identity(ReduceKind kind, Type t) {
  auto ft = cast<FloatType>(getElementTypeOrSelf(t));
  double v = kind == ReduceKind::max   ? -INFINITY
             : kind == ReduceKind::min ? INFINITY
                                       : 0.0;
  TypedAttr a = b.getFloatAttr(ft, v);
  if (auto vt = dyn_cast<mlir::VectorType>(t))
    a = DenseElementsAttr::get(vt, a);
  return arith::ConstantOp::create(b, loc, t, a);
}

SmallVector<Value> RowLowering::identities(ReduceKind kind) {
  Type f32 = b.getF32Type();
  Value zero = identity(ReduceKind::sum, f32);
  if (kind == ReduceKind::sqdev)
    return {zero, zero, zero};
  if (kind == ReduceKind::expsum)
    return {identity(ReduceKind::max, f32), zero};
  return {identity(kind, f32)};
}

Value RowLowering::combine(ReduceKind kind, Value x, Value y) {
  switch (kind) {
  case ReduceKind::sum:
    return arith::AddFOp::create(b, loc, x, y);
  case ReduceKind::max:
    return arith::MaximumFOp::create(b, loc, x, y);
  case ReduceKind::min:
    return arith::MinimumFOp::create(b, loc, x, y);
  case ReduceKind::sqdev:
  case ReduceKind::expsum:
    break;
  }
  llvm_unreachable("sqdev and expsum partials combine by combineParts");
}

SmallVector<Value> RowLowering::combineParts(ReduceOp r, ValueRange x,
                                             ValueRange y) {
  if (r.getKind() == ReduceKind::sqdev)
    return mergeMoments(x, y);
  if (r.getKind() == ReduceKind::expsum)
    return mergeExpSums(r, x, y);
  return {combine(r.getKind(), x[0], y[0])};
}

/// The exponentials of `r` (an expsum): math.exp with its fastmath flags.
Value RowLowering::expOf(ReduceOp r, Value x) {
  auto flags = r->getAttrOfType<arith::FastMathFlagsAttr>(kExpFastMathAttr);
  return math::ExpOp::create(
      b, loc, x, flags ? flags.getValue() : arith::FastMathFlags::none);
}

/// (max, sum of exp(x - max)) of two disjoint sets: each sum rescaled to the
/// larger max. A side whose max is the larger keeps its sum as it is (also
/// when both are empty, -inf: exp(-inf - -inf) would be NaN).
SmallVector<Value> RowLowering::mergeExpSums(ReduceOp r, ValueRange x,
                                             ValueRange y) {
  Value m = arith::MaximumFOp::create(b, loc, x[0], y[0]);
  auto rescaled = [&](ValueRange p) -> Value {
    Value top =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, p[0], m);
    Value scaled = arith::MulFOp::create(
        b, loc, p[1], expOf(r, arith::SubFOp::create(b, loc, p[0], m)));
    return arith::SelectOp::create(b, loc, top, p[1], scaled);
  };
  return {m, arith::AddFOp::create(b, loc, rescaled(x), rescaled(y))};
}

/// This thread's (max, sum of exp(x - max)) over its elements in `chunks`.
SmallVector<Value> RowLowering::localExpSum(ReduceOp r,
                                            MutableArrayRef<Chunk> chunks) {
  auto vt = mlir::VectorType::get({vec}, b.getF32Type());
  Value lowest = identity(ReduceKind::max, vt);
  Value zeros = identity(ReduceKind::sum, vt);
  Value top;
  for (Chunk &c : chunks) {
    Value x = chunkValue(r.getInput(), c);
    if (c.mask)
      x = arith::SelectOp::create(b, loc, c.mask, x, lowest);
    top = top ? arith::MaximumFOp::create(b, loc, top, x) : x;
  }
  Value m =
      vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXIMUMF, top);
  // A thread whose elements are all -inf (masked logits) shifts by 0, not
  // by -inf: exp(-inf - -inf) would make its sum, and the row's, NaN.
  Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m,
                                     identity(ReduceKind::max, b.getF32Type()));
  Value shift = arith::SelectOp::create(
      b, loc, none, identity(ReduceKind::sum, b.getF32Type()), m);
  Value mv = vector::BroadcastOp::create(b, loc, vt, shift);
  Value sum;
  for (Chunk &c : chunks) {
    Value e = expOf(
        r, arith::SubFOp::create(b, loc, chunkValue(r.getInput(), c), mv));
    if (c.mask)
      e = arith::SelectOp::create(b, loc, c.mask, e, zeros);
    sum = sum ? arith::AddFOp::create(b, loc, sum, e) : e;
  }
  return {m,
          vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, sum)};
}

/// (count, sum, squared deviations) of two disjoint sets of elements: the
/// sums add, and the squared deviations gain (mean_x - mean_y)^2 nx ny / n,
/// the difference of means written (Sx ny - Sy nx) / (nx ny), scaled down
/// before it is squared (squaring Sx ny - Sy nx overflowed f32 first). An
/// empty side adds nothing.
SmallVector<Value> RowLowering::mergeMoments(ValueRange x, ValueRange y) {
  Value zero = identity(ReduceKind::sum, b.getF32Type());
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
  Value n = b.createOrFold<arith::AddFOp>(loc, x[0], y[0]);
  Value sum = arith::AddFOp::create(b, loc, x[1], y[1]);
  Value d = arith::SubFOp::create(
      b, loc, b.createOrFold<arith::MulFOp>(loc, x[1], y[0]),
      b.createOrFold<arith::MulFOp>(loc, y[1], x[0]));
  Value both = b.createOrFold<arith::MulFOp>(loc, x[0], y[0]);
  // Counts are whole numbers: `both` is 0 or at least 1, and approximate
  // divisions of counts are good to 1 ulp.
  Value delta = arith::MulFOp::create(
      b, loc, d,
      b.createOrFold<arith::DivFOp>(loc, one, both, arith::FastMathFlags::afn));
  Value weight =
      b.createOrFold<arith::DivFOp>(loc, both, n, arith::FastMathFlags::afn);
  Value gap = arith::MulFOp::create(
      b, loc, arith::MulFOp::create(b, loc, delta, delta), weight);
  Value some =
      b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, both, zero);
  gap = b.createOrFold<arith::SelectOp>(loc, some, gap, zero);
  Value sq = arith::AddFOp::create(
      b, loc, arith::AddFOp::create(b, loc, x[2], y[2]), gap);
  return {n, sum, sq};
}

/// The moments of this thread's elements of the row in `chunks`: their sum,
/// then the squared deviations from their own mean (two passes over values
/// the thread holds).
SmallVector<Value> RowLowering::localMoments(ReduceOp r,
                                             MutableArrayRef<Chunk> chunks) {
  Type f32 = b.getF32Type();
  auto vt = mlir::VectorType::get({vec}, f32);
  Value zeros = identity(ReduceKind::sum, vt);
  Value ones = arith::ConstantOp::create(
      b, loc, vt, DenseElementsAttr::get(vt, b.getF32FloatAttr(1.0)));
  Value sum, count;
  bool masked = false;
  for (Chunk &c : chunks) {
    Value x = chunkValue(r.getInput(), c);
    Value in = ones;
    if (c.mask) {
      x = arith::SelectOp::create(b, loc, c.mask, x, zeros);
      in = arith::SelectOp::create(b, loc, c.mask, ones, zeros);
      masked = true;
    }
    sum = sum ? arith::AddFOp::create(b, loc, sum, x) : x;
    count = count ? arith::AddFOp::create(b, loc, count, in) : in;
  }
  auto add = vector::CombiningKind::ADD;
  Value s = vector::ReductionOp::create(b, loc, add, sum);
  Value n = masked
                ? Value(vector::ReductionOp::create(b, loc, add, count))
                : Value(arith::ConstantOp::create(
                      b, loc, b.getF32FloatAttr(double(vec * chunks.size()))));
  Value zero = identity(ReduceKind::sum, f32);
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
  // A thread past the row's end has no elements: mean 0, nothing added.
  Value inv =
      b.createOrFold<arith::DivFOp>(loc, one, n, arith::FastMathFlags::afn);
  inv = b.createOrFold<arith::SelectOp>(
      loc,
      b.createOrFold<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, n, zero),
      inv, zero);
  Value mean = vector::BroadcastOp::create(
      b, loc, vt, arith::MulFOp::create(b, loc, s, inv));
  Value sq;
  for (Chunk &c : chunks) {
    Value dev =
        arith::SubFOp::create(b, loc, chunkValue(r.getInput(), c), mean);
    dev = arith::MulFOp::create(b, loc, dev, dev);
    if (c.mask)
      dev = arith::SelectOp::create(b, loc, c.mask, dev, zeros);
    sq = sq ? arith::AddFOp::create(b, loc, sq, dev) : dev;
  }
  return {n, s, vector::ReductionOp::create(b, loc, add, sq)};
}

static vector::CombiningKind combiningKind(ReduceKind k) {
  switch (k) {
  case ReduceKind::max:
    return vector::CombiningKind::MAXIMUMF;
  case ReduceKind::min:
    return vector::CombiningKind::MINIMUMF;
  default:
    return vector::CombiningKind::ADD;
  }
}

Value RowLowering::accumulate(ReduceOp r, Chunk &c, Value acc) {
  Value x = chunkValue(r.getInput(), c);
  if (c.mask)
    x = arith::SelectOp::create(b, loc, c.mask, x,
                                identity(r.getKind(), x.getType()));
  return acc ? combine(r.getKind(), acc, x) : x;
}

SmallVector<Value> RowLowering::threadPartial(ReduceOp r,
                                              MutableArrayRef<Chunk> chunks) {
  if (r.getKind() == ReduceKind::sqdev)
    return localMoments(r, chunks);
  if (r.getKind() == ReduceKind::expsum)
    return localExpSum(r, chunks);
  Value acc;
  for (Chunk &c : chunks)
    acc = accumulate(r, c, acc);
  return {reduceVector(r, acc)};
}

Value RowLowering::reduceVector(ReduceOp r, Value acc) {
  return vector::ReductionOp::create(b, loc, combiningKind(r.getKind()), acc);
}

Value RowLowering::groupReduce(GroupReduceOp g, Chunk &c) {
  Value part = vector::ReductionOp::create(b, loc, combiningKind(g.getKind()),
                                           chunkValue(g.getInput(), c));
  Value w32 = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 32);
  for (int64_t off = int64_t(g.getGroup()) / vec / 2; off >= 1; off /= 2) {
    Value o = arith::ConstantIntOp::create(b, loc, b.getI32Type(), off);
    Value other =
        gpu::ShuffleOp::create(b, loc, part, o, w32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    part = combine(g.getKind(), part, other);
  }
  return vector::BroadcastOp::create(
      b, loc, mlir::VectorType::get({vec}, b.getF32Type()), part);
}

/// Combines `x` over each aligned group of `width` lanes (a power of two up
/// to 32) by xor shuffles: every lane of a group ends with its total.
/// Constants (counts every lane shares) are not shuffled. With `within` (an
/// index, a power of two known only at run time), a step combines only when
/// its offset is below it: groups of min(width, within) lanes.
SmallVector<Value> RowLowering::butterfly(ValueRange xs, ReduceOp r,
                                          int64_t width, Value within) {
  SmallVector<Value> x(xs);
  Value w32 = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 32);
  for (int64_t off = width / 2; off >= 1; off /= 2) {
    Value o = arith::ConstantIntOp::create(b, loc, b.getI32Type(), off);
    SmallVector<Value> other;
    for (Value v : x)
      other.push_back(
          matchPattern(v, m_Constant())
              ? v
              : gpu::ShuffleOp::create(b, loc, v, o, w32, gpu::ShuffleMode::XOR)
                    .getShuffleResult());
    SmallVector<Value> next = combineParts(r, x, other);
    if (within) {
      Value take = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         cIndex(off), within);
      for (auto [n, v] : llvm::zip_equal(next, x))
        n = arith::SelectOp::create(b, loc, take, n, v);
    }
    x = next;
  }
  return x;
}

/// Combines per-thread partials over the threads of a row: butterfly
/// shuffles within a warp, then shared memory across the row's warps. The
/// partials of one level cross under one barrier.
SmallVector<SmallVector<Value>>
RowLowering::crossThreadReduce(ArrayRef<Partial> parts) {
  int64_t tpr = sched.getThreadsPerRow();
  SmallVector<SmallVector<Value>> s;
  if (launchedRows()) {
    // Rows of any power of two threads: a warp's groups of min(threads, 32)
    // lanes, then the warps of rows over 32 threads (a uniform branch: every
    // thread of a block has the same blockDim.x).
    for (const Partial &p : parts)
      s.push_back(butterfly(p.values, p.op, 32, threads));
    SmallVector<Type> types;
    for (const SmallVector<Value> &xs : s)
      for (Value x : xs)
        types.push_back(x.getType());
    Value wide = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                       threads, cIndex(32));
    auto ifOp = scf::IfOp::create(b, loc, types, wide, true);
    auto yield = [&](ArrayRef<SmallVector<Value>> values) {
      SmallVector<Value> flat;
      for (const SmallVector<Value> &xs : values)
        llvm::append_range(flat, xs);
      scf::YieldOp::create(b, loc, flat);
    };
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      yield(acrossWarps(parts, s));
      b.setInsertionPointToStart(ifOp.elseBlock());
      yield(s);
    }
    ValueRange results = ifOp.getResults();
    for (SmallVector<Value> &xs : s)
      for (Value &x : xs) {
        x = results.front();
        results = results.drop_front();
      }
    return s;
  }
  // Launched threads are whole warps.
  for (const Partial &p : parts)
    s.push_back(butterfly(p.values, p.op, std::min<int64_t>(tpr, 32)));
  if (sched.getCluster())
    return clusterReduce(s, parts);
  if (tpr <= 32)
    return s;
  return acrossWarps(parts, s);
}

SmallVector<SmallVector<Value>>
RowLowering::acrossWarps(ArrayRef<Partial> parts,
                         ArrayRef<SmallVector<Value>> warpTotals) {
  SmallVector<SmallVector<Value>> s(warpTotals);
  int64_t tpr = sched.getThreadsPerRow();
  int64_t warps = tpr / 32, rpb = sched.getRowsPerBlock();
  Value smem = func.getWorkgroupAttributions().front();
  // Launched rows of a block (tpr * rpb threads at most) take a slot's
  // region in turn, as many slots as warps were launched each.
  auto launchedWarps = [&]() -> Value {
    return arith::DivUIOp::create(b, loc, threads, cIndex(32));
  };
  Value launched = launchedRows() ? launchedWarps() : Value();
  auto slotBase = [&](int slot) -> Value {
    if (launchedRows())
      return arith::AddIOp::create(
          b, loc, cIndex(slot * rpb * warps),
          arith::MulIOp::create(b, loc, rowInBlock, launched));
    return arith::MulIOp::create(
        b, loc, arith::AddIOp::create(b, loc, cIndex(slot * rpb), rowInBlock),
        cIndex(warps));
  };
  Value warp = arith::DivUIOp::create(b, loc, lane, cIndex(32));
  Value leader = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, lane, cIndex(32)), cIndex(0));
  {
    OpBuilder::InsertionGuard g(b);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, leader, false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    for (auto [p, xs] : llvm::zip(parts, s))
      for (auto [k, x] : llvm::enumerate(xs))
        if (!matchPattern(x, m_Constant()))
          memref::StoreOp::create(b, loc, x, smem,
                                  ValueRange{arith::AddIOp::create(
                                      b, loc, slotBase(p.slot + k), warp)});
  }
  gpu::BarrierOp::create(b, loc);
  // Every slot is written once per kernel, so no second barrier is needed
  // before the next reduction.
  for (auto [p, xs] : llvm::zip(parts, s)) {
    auto slot = [&](int64_t k, Value w) -> Value {
      if (matchPattern(xs[k], m_Constant()))
        return xs[k];
      return memref::LoadOp::create(
          b, loc, smem,
          ValueRange{arith::AddIOp::create(b, loc, slotBase(p.slot + k), w)});
    };
    SmallVector<Value> total;
    if (sched.getLaunchThreads()) {
      // Up to `warps` slots, as many filled as warps were launched: lane i
      // reads slot i (identity past the launched ones) and the lanes combine
      // by shuffles, log2(warps) steps rather than a chain of `warps`.
      if (!launchedRows())
        launched = launchedWarps();
      Value i = arith::RemUIOp::create(b, loc, lane, cIndex(warps));
      auto isUsed = [&] {
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                                     launched);
      };
      Value used;
      // Past the launched warps a lane reads its row's first slot: the
      // slots of rows after it may lie past the array.
      if (launchedRows()) {
        used = isUsed();
        i = arith::SelectOp::create(b, loc, used, i, cIndex(0));
      }
      for (int64_t k = 0, e = xs.size(); k < e; ++k)
        total.push_back(slot(k, i));
      if (!used)
        used = isUsed();
      SmallVector<Value> none = identities(ReduceOp(p.op).getKind());
      for (auto [x, id] : llvm::zip_equal(total, none))
        x = arith::SelectOp::create(b, loc, used, x, id);
      total = butterfly(total, p.op, warps);
    } else {
      for (int64_t w = 0; w < warps; ++w) {
        SmallVector<Value> x;
        for (int64_t k = 0, e = xs.size(); k < e; ++k)
          x.push_back(slot(k, cIndex(w)));
        total = total.empty() ? x : combineParts(p.op, total, x);
      }
    }
    xs = total;
  }
  return s;
}

std::pair<ReduceOp, int> RowLowering::twinOf(ReduceOp r) {
  // Which plain reduction each tuple kind computes on the way, and where.
  auto twin = [&](ReduceKind kind) -> std::pair<ReduceKind, int> {
    if (kind == ReduceKind::sqdev)
      return {ReduceKind::sum, 1};
    if (kind == ReduceKind::expsum)
      return {ReduceKind::max, 0};
    return {kind, -1};
  };
  for (ReduceOp t : reduces) {
    auto [kind, index] = twin(t.getKind());
    if (index >= 0 && kind == r.getKind() && t.getInput() == r.getInput())
      return {t, index};
  }
  return {};
}

void RowLowering::finish(ArrayRef<ReduceOp> rs,
                         ArrayRef<SmallVector<Value>> partials) {
  SmallVector<Partial> parts;
  for (auto [i, values] : llvm::enumerate(partials)) {
    ReduceOp r = rs[i];
    parts.push_back({values, r, slotOf.lookup(r)});
  }
  SmallVector<SmallVector<Value>> totals = crossThreadReduce(parts);
  for (auto [i, total] : llvm::enumerate(totals)) {
    ReduceOp r = rs[i];
    // One value, or a tuple's last (squared deviations, sum of
    // exponentials); its twin takes the value it computes on the way.
    map.map(r.getResult(), total.back());
    for (ReduceOp t : reduces)
      if (auto [of, index] = twinOf(t); of == r)
        map.map(t.getResult(), total[index]);
  }
}

int RowLowering::slotsOf(ReduceKind kind) {
  return kind == ReduceKind::sqdev ? 3 : kind == ReduceKind::expsum ? 2 : 1;
}
