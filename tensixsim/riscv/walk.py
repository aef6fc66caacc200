"""The Python twins of ``native.c``'s block, memory and code hooks and of its timing walk: the same
steps in the same order, so that both give the same cycles (used when no C compiler is available;
tests compare them). A mixin of tensixsim.riscv.native.Hooks, over the state both share
(tensixsim.riscv.hook_state).
"""

from __future__ import annotations

import ctypes

import unicorn
from unicorn import riscv_const as rv

from tensixsim.arch.blackhole_csrs import (
    CFG0_DIS_BP,
    CFG0_DIS_CSR_SYNC,
    CFG0_DIS_LD_BUF_BYP,
    CFG0_DIS_LOW_CACHE_PERIODIC_FLUSH,
    CFG0_DIS_LOW_CASH,
    CFG0_DIS_REG_FORWARDING,
    CFG0_DIS_ST_MERGE,
    CFG0_SYNC_ALL_OPS,
)
from tensixsim.riscv.hook_state import (
    BHT,
    BLOCK_CACHE,
    CLASS_L1,
    CLASS_LOCAL,
    CLASS_MMIO,
    CLASS_REMOTE,
    DIV_LOG,
    HISTORY,
    L0_HIT,
    L0_HIT_FLUSH,
    L0_MISS,
    L0_PASSED,
    LOOP_BLOCKS,
    MEM_LOG,
    MEM_WRITE,
    NOC,
    PC_REG,
    PROBE_READS,
    STOP_HOLE,
    STOP_LIMIT,
    STOP_MISALIGNED,
    STOP_SPIN,
    STOP_SYNC,
    STOP_WATCH,
    STORE_QUEUE,
    SYNC_NEVER,
    X0_REG,
    HookState,
    P,
    divide_cycles,
    is_divide,
)


class PythonWalk:
    """The Python hooks and timing walk of one Unicorn instance (Hooks adds the state and the API)."""

    state: HookState
    _code: object

    # Python twins of native.c's walk (used only without a compiler); the same steps, in the same
    # order, so that both paths give the same cycles.
    def _natural(self, done: int) -> int:
        s = self.state
        return s.time_base + done + s.extra + s.stall

    def _fetch(self, uc: unicorn.Uc, pc: int) -> int:
        if pc + 4 <= self.state.l1_size:
            return int(self._code[pc >> 2])
        try:
            return int.from_bytes(uc.mem_read(pc, 4), "little")
        except unicorn.UcError:
            return 0  # nothing mapped there (a fetch fault being timed): fetch_word reads 0 too

    def _walk(self, uc: unicorn.Uc, target: int) -> None:
        s = self.state
        target = min(target, s.icount)  # nothing past the instructions entered
        end = s.block_addr + s.block_size
        while s.walk_done < target:
            pc = end - 4 * (s.icount - s.walk_done)
            n = self._natural(s.walk_done)
            t, after = self._step(uc, pc, self._fetch(uc, pc), n, commit=True)
            s.stall += t - n + after
            s.walk_done += 1

    def _predict(self, uc: unicorn.Uc, next_pc: int) -> None:
        """native.c predict(): the branch ending the block just left, against its counter."""
        s = self.state
        pc = s.block_addr + s.block_size - 4
        op = self._fetch(uc, pc) & 0x7F
        if s.cfg0 & CFG0_DIS_BP:
            if op in (0x63, 0x6F, 0x67) and next_pc != pc + 4:
                s.stall += s.param[P["branch_mispredict"]]
            return
        if op != 0x63:
            return
        taken = next_pc != pc + 4
        i = (pc >> 2) % BHT
        if (s.bht[i] >= 2) != taken:
            s.stall += s.param[P["branch_mispredict"]]
        s.bht[i] = min(s.bht[i] + 1, 3) if taken else max(s.bht[i] - 1, 0)

    def _next_access(self) -> int:
        s = self.state
        i = s.mem_used
        s.mem_used += 1
        return s.mem_addr[i] if i < s.mem_n and i < MEM_LOG else 0

    def _region_class(self, a: int) -> int:
        s = self.state
        if a < s.l1_size:
            return CLASS_L1
        if 0 <= a - s.local_base < s.local_size:
            return CLASS_LOCAL
        if s.alias_lo <= a < s.alias_hi:
            return CLASS_REMOTE
        return CLASS_MMIO

    def _mmio_cost(self, a: int, write: bool) -> int:
        s = self.state
        for i in range(s.timed_count):
            if s.timed_lo[i] <= a < s.timed_hi[i]:
                return s.timed_write[i] if write else s.timed_read[i]
        return s.param[P["mmio_write" if write else "mmio_read"]]

    def _port_grant(self, t: int, cycles: int, commit: bool) -> int:
        s = self.state
        grant = max(t, s.port_free)
        if commit:
            s.port_free = grant + s.port_share * cycles
        return grant

    def _queue_drained(self, t: int) -> int:
        return max(t, *self.state.sq_visible)

    def _store(self, a: int, size: int, c: int, t: int, commit: bool) -> tuple[int, int]:
        """native.c store(): (issue cycle, cycles the core waits after it)."""
        s, p = self.state, self.state.param
        rear = (s.sq_head + STORE_QUEUE - 1) % STORE_QUEUE
        data = ((1 << size) - 1) << (a & 15)
        if (
            c == CLASS_L1
            and p[P["l1_store_coalesce"]]
            and not s.cfg0 & CFG0_DIS_ST_MERGE
            and s.sq_visible[rear] > t
            and s.sq_mask[rear] >> 16 == (a >> 4) + 1
            and abs(a - s.sq_last[rear]) <= 4
        ):
            if commit:
                mask = (s.sq_mask[rear] | data) & 0xFFFF
                s.sq_mask[rear] = (s.sq_mask[rear] & ~0xFFFF) | mask
                s.sq_last[rear] = a
                if mask == 0xFFFF:
                    leave = max(t + 1, s.sq_visible[rear] - p[P["l1_store_drain"]] + 1)
                    if leave < s.sq_visible[rear]:
                        s.sq_visible[rear] = s.l1_write_free = leave
                s.stores_done = max(s.stores_done, t + p[P["store_done"]])
                s.sq_done[rear] = max(s.sq_done[rear], t + p[P["store_done"]])
            return t, 0
        i = s.sq_head
        oldest = (i + STORE_QUEUE - p[P["store_queue"]]) % STORE_QUEUE
        t = max(t, s.sq_visible[oldest] - 1)
        block = 0
        if c == CLASS_L1:
            start = max(t + 1, s.l1_write_free)
            start = max(start, self._port_grant(t, p[P["l1_port_cycles"]], commit) + 1)
            leave = start + (1 if data == 0xFFFF else p[P["l1_store_drain"]])
            if commit:
                s.l1_write_free = leave
        elif c == CLASS_MMIO:
            cost = self._mmio_cost(a, True)
            block = cost - 1
            leave = t + cost
        else:
            leave = t + p[P["local_store_visible"]]
        if commit:
            s.sq_word[i] = a >> 2
            s.sq_last[i] = a
            s.sq_mask[i] = ((a >> 4) + 1) << 16 | data if c == CLASS_L1 else 0
            s.sq_visible[i] = leave
            s.sq_done[i] = t + p[P["store_done"]]
            s.sq_head = (i + 1) % STORE_QUEUE
            s.stores_done = max(s.stores_done, t + p[P["store_done"]])
        return t, block

    def _store_conflict(self, a: int, t: int) -> bool:
        """native.c store_conflict(): an L1 read at ``t`` overlaps a store not yet performed."""
        s = self.state
        for i in range(STORE_QUEUE):
            mask = s.sq_mask[i]
            if s.sq_done[i] > t and mask >> 16 == (a >> 4) + 1 and mask & (0xF << (a & 12)):
                return True
        return False

    def _load_wait(self, a: int, t: int) -> int:
        """native.c load_wait(): when a load not from L1 may leave EX1."""
        s = self.state
        for i in range(STORE_QUEUE):
            if s.sq_visible[i] > t and s.sq_word[i] == a >> 2:
                t = s.sq_visible[i]
        return t

    def _source(self, r: int, t: int) -> int:
        if not r:
            return t
        s = self.state
        t = max(t, s.ready[r])
        if s.reg_prev_retire[r] >= t:
            t = s.reg_prev_retire[r] + 1
        if s.cfg0 & CFG0_DIS_REG_FORWARDING and s.reg_retire[r] >= t:
            t = s.reg_retire[r] + 1
        return t

    def _fence_hold(self, t: int) -> int:
        """native.c fence_hold()."""
        s = self.state
        hold = 0 if s.cfg0 & CFG0_DIS_CSR_SYNC else s.param[P["fence"]] - 1
        return max(hold, s.stores_done - t)

    def _strongly_ordered(self, t: int) -> int:
        """native.c strongly_ordered()."""
        fence = max(self._queue_drained(t), self.state.responses)
        return fence + 1 + self._fence_hold(fence)

    def _l0_on(self) -> bool:
        s = self.state
        return bool(s.param[P["l0_lines"]]) and not s.cfg0 & CFG0_DIS_LOW_CASH

    def _l0_index(self, lines: ctypes.Array, line: int) -> int:
        """native.c l0_index(): the entry of ``lines`` (l0_line or l0_tag) holding ``line``, or -1."""
        for i in range(self.state.param[P["l0_lines"]]):
            if lines[i] == line + 1:
                return i
        return -1

    @staticmethod
    def _l0_to_front(lines: ctypes.Array, payload: ctypes.Array, i: int, line: int) -> None:
        """native.c l0_to_front(): entry ``i`` comes first, holding ``line``, its payload as it was."""
        size, at = ctypes.sizeof(payload) // len(payload), ctypes.addressof(payload)
        kept = ctypes.string_at(at + i * size, size)
        ctypes.memmove(ctypes.addressof(lines) + 8, ctypes.addressof(lines), 8 * i)
        ctypes.memmove(at + size, at, i * size)
        lines[0] = line + 1
        ctypes.memmove(at, kept, size)

    def _l0_remove(self, lines: ctypes.Array, payload: ctypes.Array, line: int) -> None:
        """native.c l0_remove(): the entry holding ``line``, if any, leaves."""
        i, n = self._l0_index(lines, line), self.state.param[P["l0_lines"]]
        if i < 0:
            return
        size, at = ctypes.sizeof(payload) // len(payload), ctypes.addressof(payload)
        ctypes.memmove(
            ctypes.addressof(lines) + 8 * i, ctypes.addressof(lines) + 8 * (i + 1), 8 * (n - 1 - i)
        )
        ctypes.memmove(at + i * size, at + (i + 1) * size, (n - 1 - i) * size)
        lines[n - 1] = 0

    def _l0_find(self, line: int) -> int:
        return self._l0_index(self.state.l0_line, line)

    def _l0_use(self, i: int, line: int, ready: int) -> None:
        """native.c l0_use(): entry ``i`` comes first, holding ``line`` from ``ready`` on."""
        s = self.state
        self._l0_to_front(s.l0_line, s.l0_ready, i, line)
        s.l0_ready[0] = ready

    def _l0_drop(self, line: int) -> None:
        self._l0_remove(self.state.l0_line, self.state.l0_ready, line)

    def _l0_flush(self) -> None:
        ctypes.memset(
            ctypes.addressof(self.state) + HookState.l0_line.offset, 0, ctypes.sizeof(self.state.l0_line)
        )

    def _l0_chance(self) -> bool:
        """native.c l0_chance(): the xorshift draw deciding whether a hit flushes the cache."""
        s = self.state
        x = s.l0_rng & 0xFFFFFFFF
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        s.l0_rng = x
        return x % s.param[P["l0_flush_one_in"]] == 0

    # The L0 data cache as the core's loads meet it (native.c l0_held ... l0_performed).
    def _l0_held(self, line: int) -> int:
        return self._l0_index(self.state.l0_tag, line)

    def _l0_keep(self, i: int, line: int) -> None:
        self._l0_to_front(self.state.l0_tag, self.state.l0_data, i, line)

    def _l0_release(self, line: int) -> None:
        self._l0_remove(self.state.l0_tag, self.state.l0_data, line)

    def _l0_release_all(self) -> None:
        s = self.state
        ctypes.memset(ctypes.addressof(s) + HookState.l0_tag.offset, 0, ctypes.sizeof(s.l0_tag))

    def _atomic_access(self, uc: unicorn.Uc) -> bool:
        return self._fetch(uc, uc.reg_read(PC_REG)) & 0x7F == 0x2F

    def _l0_answer(self, uc: unicorn.Uc, address: int, size: int, i: int) -> bool:
        """native.c l0_answer(): an L1 load the L0 data cache answers, with the bytes it holds."""
        s = self.state
        if not s.l0_tag[0] or not self._l0_on():
            return False
        way = self._l0_held(address >> 4)
        if way < 0 or self._atomic_access(uc):
            return False
        held = bytes(s.l0_data[way])[address & 15 : (address & 15) + size]
        current = ctypes.string_at(s.l1 + address, size)
        if current != held:
            s.l0_lent, s.l0_lent_size = address + 1, size
            s.l0_lent_bytes = int.from_bytes(current, "little")
            ctypes.memmove(s.l1 + address, held, size)
        self._l0_keep(way, address >> 4)
        flush = not s.cfg0 & CFG0_DIS_LOW_CACHE_PERIODIC_FLUSH and self._l0_chance()
        if flush:
            self._l0_release_all()
        if i < MEM_LOG:
            s.l0_log[i] = L0_HIT_FLUSH if flush else L0_HIT
        return True

    def _l0_performed(self, uc: unicorn.Uc, kind: int, address: int, i: int) -> None:
        """native.c l0_performed(): an L1 access made (a load fills, a store drops, an atomic flushes)."""
        s = self.state
        done = L0_PASSED
        if kind == MEM_WRITE:
            if s.l0_tag[0]:
                self._l0_release(address >> 4)
        elif s.l0_tag[0] or self._l0_on():
            if self._atomic_access(uc):
                self._l0_release_all()
            elif self._l0_on():
                last = s.param[P["l0_lines"]] - 1
                s.l0_data[last][:] = ctypes.string_at(s.l1 + (address & ~15), 16)
                self._l0_keep(last, address >> 4)
                done = L0_MISS
        if i < MEM_LOG:
            s.l0_log[i] = done

    def _step(self, uc: unicorn.Uc, pc: int, w: int, t: int, *, commit: bool) -> tuple[int, int]:
        s, p = self.state, self.state.param
        op, rd, rs1, rs2 = w & 0x7F, (w >> 7) & 31, (w >> 15) & 31, (w >> 20) & 31
        f3, f7 = (w >> 12) & 7, w >> 25
        latency, block = 1, 0
        ready = s.ready
        noted, noted_kind = -1, 0  # an L1 access for L1 ordering by page (native.c step)
        if w & 3 != 3:  # a Tensix instruction word (native.c step: fusion)
            fused = s.fusion and pc == s.fuse_next and s.fuse_count < 4 and t == s.fuse_cycle + 1
            if fused:
                t = s.fuse_cycle
            if commit:
                s.fuse_count = s.fuse_count + 1 if fused else 1
                s.fuse_cycle = t
                s.fuse_next = pc + 4
            return t, p[P["tensix_push"]] - 1
        rob_slot = s.rob_pos  # (kept below retire_queue)
        t = max(t, s.rob[rob_slot] + 1)
        source = self._source
        if op == 0x33:
            t = source(rs2, source(rs1, t))
            if f7 == 1:
                if f3 < 4:
                    latency = p[P["mul_latency"]]
                    block = p[P["mul_hold"]]
                else:
                    used = s.div_used
                    s.div_used += 1
                    if not commit:
                        s.div_used = used
                    latency = s.div_log[used] if used < s.div_n and used < DIV_LOG else p[P["div_min"]]
                    block = latency - 1
        elif op in (0x13, 0x67):
            t = source(rs1, t)
        elif op == 0x63:
            t = source(rs2, source(rs1, t))
            rd = 0
        elif op == 0x03:
            t = source(rs1, t)
            if s.strong_order:
                t = self._strongly_ordered(t)
            if s.cfg0 & CFG0_DIS_LD_BUF_BYP:
                t = self._queue_drained(t)
            used = s.mem_used
            a = self._next_access()
            if not commit:
                s.mem_used = used
            c = self._region_class(a)
            logged = c == CLASS_L1 and used < s.mem_n and used < MEM_LOG
            l0 = s.l0_log[used] if logged else L0_PASSED
            hit = l0 >= L0_HIT
            if c == CLASS_L1 and not hit:
                noted = a
            conflict = c == CLASS_L1 and not hit and self._store_conflict(a, t)
            if c != CLASS_L1:
                t = self._load_wait(a, t)
            if hit:
                way = self._l0_find(a >> 4)
                arrives = s.l0_ready[way] if way >= 0 else t
                latency = max(p[P["l0_hit_latency"]], arrives - t)
                if commit:
                    self._l0_use(way if way >= 0 else p[P["l0_lines"]] - 1, a >> 4, arrives)
                    if l0 == L0_HIT_FLUSH:
                        self._l0_flush()
            elif c in (CLASS_L1, CLASS_REMOTE):
                l1 = c == CLASS_L1
                slot = s.l1_slot if l1 else s.remote_slot
                head = s.l1_head if l1 else s.remote_head
                count = p[P["l1_read_slots" if l1 else "remote_read_slots"]]
                occupancy = p[P["l1_read_occupancy" if l1 else "remote_read_occupancy"]]
                t = max(t, slot[head])
                grant = self._port_grant(t, p[P["l1_port_cycles"]], commit) if l1 else t
                if conflict:
                    grant += p[P["l1_store_conflict"]]
                if commit:
                    slot[head] = grant + occupancy
                    if l1:
                        s.l1_head = (head + 1) % count
                    else:
                        s.remote_head = (head + 1) % count
                latency = p[P["l1_load_latency" if l1 else "remote_load_latency"]] + grant - t
                if commit and l0 == L0_MISS:
                    self._l0_use(p[P["l0_lines"]] - 1, a >> 4, t + latency)
            elif c == CLASS_LOCAL:
                latency = p[P["local_load_latency"]]
            else:
                latency = self._mmio_cost(a, False)
            if commit:
                s.responses = max(s.responses, t + latency)
        elif op == 0x23:
            t = source(rs2, source(rs1, t))
            if s.strong_order:
                t = self._strongly_ordered(t)
            used = s.mem_used
            a = self._next_access()
            if not commit:
                s.mem_used = used
            c = self._region_class(a)
            if c == CLASS_L1:
                noted, noted_kind = a, MEM_WRITE
            t, block = self._store(a, 1 << (f3 & 3), c, t, commit)
            if commit and c == CLASS_L1:
                self._l0_drop(a >> 4)
            rd = 0
        elif op == 0x2F:
            t = source(rs2, source(rs1, t))
            t = max(self._queue_drained(t), s.responses)
            used = s.mem_used
            a = self._next_access()
            self._next_access()
            if not commit:
                s.mem_used = used
            if self._region_class(a) == CLASS_L1:
                t = self._port_grant(t, p[P["l1_port_atomic"]], commit)
                noted, noted_kind = a, MEM_WRITE
            latency = p[P["atomic_latency"]]
            if commit:
                s.responses = t + latency
                self._l0_flush()
        elif op == 0x0F:
            t = max(self._queue_drained(t), s.responses)
            block = self._fence_hold(t)
            if commit:
                self._l0_flush()
            rd = 0
        elif op == 0x73:
            if f3:
                t = t if f3 & 4 else source(rs1, t)
                block = 0 if s.cfg0 & CFG0_DIS_CSR_SYNC else p[P["csr"]] - 1
            else:
                rd = 0
        elif op not in (0x37, 0x17, 0x6F):
            rd = 0
        retire = max(t + latency, s.last_retire + 1)
        if s.cfg0 & CFG0_SYNC_ALL_OPS:
            block = max(block, retire + p[P["csr"]] - 2 - t)
        if commit:
            if noted >= 0 and s.page_order and int(self._pages.sharers[noted >> 12]) & ~NOC == s.core_bit:
                self._private_access(noted, noted_kind, t)
            s.rob[rob_slot] = retire
            s.rob_pos = 0 if rob_slot + 1 == p[P["retire_queue"]] else rob_slot + 1
            s.last_retire = retire
            if rd:
                ready[rd] = t + latency
                s.reg_prev_retire[rd] = s.reg_retire[rd]
                s.reg_retire[rd] = retire
        return t, block

    # Python twins of the C hooks (used only without a compiler).
    def _py_block(self, uc: unicorn.Uc, address: int, size: int, _: object) -> None:
        self.l0_restore()
        s = self.state
        before = s.icount
        self._walk(uc, before)
        if s.block_size:
            self._predict(uc, address)
        s.mem_n = s.mem_used = 0
        s.div_n = s.div_used = 0
        s.icount += size >> 2
        s.block_addr = address
        s.block_size = size
        if before + s.stall >= s.limit:
            s.stop_reason = STOP_LIMIT
            uc.emu_stop()
            return
        if self._unhooked_watch(uc, address, size):
            s.stop_reason = STOP_WATCH
            uc.emu_stop()
            return
        resumed, s.resumed = s.resumed, 0
        if resumed:
            pass  # (native.c: the rest of a block counted when it was entered)
        elif address == s.loop_head:
            s.since_head = 0
            if s.busy[(address >> 2) & 63] != address:
                s.repeat += 1
                if s.repeat >= s.spin_threshold:
                    s.stop_reason = STOP_SPIN
                    uc.emu_stop()
                    return
        else:
            s.since_head += 1
            if s.since_head > LOOP_BLOCKS or (
                s.history_pos and s.history_addr[(s.history_pos - 1) % HISTORY] == address
            ):
                s.loop_head, s.since_head, s.repeat_start = address, 0, before
                s.repeat_cycle, s.repeat = self._first_entry(address, self._natural(before))
                s.spin_threshold = s.spin_reset
        if not resumed:
            s.history_addr[s.history_pos % HISTORY] = address
            s.history_cycle[s.history_pos % HISTORY] = self._natural(before)
            s.history_pos += 1
        page = (address - s.code_base) >> 12
        if address >= s.code_base and page < s.code_pages and not s.executed[page]:
            s.executed[page] = 1
            s.new_code_page = 1

    def _is_watched(self, w: int) -> bool:
        """native.c is_watched(): divides, and fences where there is an L0 data cache."""
        return is_divide(w) or (w & 0x7F == 0x0F and bool(self.state.param[P["l0_lines"]]))

    def _unhooked_watch(self, uc: unicorn.Uc, address: int, size: int) -> bool:
        s = self.state
        key, slot = address | size << 32, (address >> 2) % BLOCK_CACHE
        if s.watch_key[slot] == key:
            return False
        if any(self._is_watched(self._fetch(uc, pc)) for pc in range(address, address + size, 4)):
            return True
        s.watch_key[slot] = key
        s.blocks_known = 1
        return False

    def _py_code(self, uc: unicorn.Uc, address: int, size: int, _: object) -> None:
        """native.c tsim_code_hook(): a fence flushes the L0 data cache; a divide's cycles are logged."""
        self.l0_restore()
        s = self.state
        w = self._fetch(uc, address)
        if w & 0x7F == 0x0F:
            self._l0_release_all()
            return
        if not is_divide(w):
            return
        rs1, rs2 = (w >> 15) & 31, (w >> 20) & 31
        a = uc.reg_read(rv.UC_RISCV_REG_X0 + rs1) & 0xFFFFFFFF if rs1 else 0
        b = uc.reg_read(rv.UC_RISCV_REG_X0 + rs2) & 0xFFFFFFFF if rs2 else 0
        if s.div_n < DIV_LOG:
            s.div_log[s.div_n] = divide_cycles(s.param, (w >> 12) & 7, a, b)
        s.div_n += 1

    def _first_entry(self, address: int, now: int) -> tuple[int, int]:
        s = self.state
        first, repeats, tight = now, 0, True
        for i in range(1, min(s.history_pos, LOOP_BLOCKS + 1) + 1):
            j = (s.history_pos - i) % HISTORY
            if s.history_addr[j] == address:
                first = s.history_cycle[j]
                repeats += tight
            else:
                tight = False
        return first, repeats

    def _py_mem(self, uc: unicorn.Uc, kind: int, address: int, size: int, value: int, _: object) -> None:
        self.l0_restore()
        s = self.state
        logged = s.mem_n
        if s.mem_n < MEM_LOG:
            s.mem_addr[s.mem_n] = address
        s.mem_n += 1
        if s.probing:
            if kind == MEM_WRITE:
                s.probe_wrote = 1  # (a loop that stores is no poll loop)
                if s.probe_unsynced and address >= s.l1_size:
                    self.probe_stop(uc)
                    return
                s.probe_strict = 1
            else:
                if s.probe_count < PROBE_READS:
                    s.probe_addr[s.probe_count], s.probe_size[s.probe_count] = address, size
                    s.probe_cycle[s.probe_count] = self.time_at(uc, uc.reg_read(PC_REG))
                s.probe_count += 1
        misaligned = address & (size - 1) != 0
        hole = 0 <= address - s.hole_lo < s.hole_size
        aligned = not misaligned and not hole
        if aligned and address < s.l1_size:
            # An L0 hit asks nothing of L1, so it waits for no other core.
            if kind != MEM_WRITE and self._l0_answer(uc, address, size, logged):
                return
            if not self._l1_sync_stop(uc, kind, address, size):
                self._l0_performed(uc, kind, address, logged)
            return
        if aligned and address < s.mmio_base:
            return
        pc = uc.reg_read(PC_REG)
        if not misaligned and not hole:
            s.mmio_pc = pc
            return
        s.stop_reason = STOP_MISALIGNED if misaligned else STOP_HOLE
        s.fault_addr, s.fault_size, s.fault_pc = address, size, pc
        s.fault_write = kind == MEM_WRITE
        if s.fault_write:
            s.fault_old = int.from_bytes(uc.mem_read(address, size), "little")
        else:
            insn = int.from_bytes(uc.mem_read(pc, 4), "little")
            s.fault_rd = (insn >> 7) & 31
            s.fault_old = uc.reg_read(X0_REG + s.fault_rd)
        uc.reg_write(PC_REG, pc)
        uc.emu_stop()

    def _l1_sync_stop(self, uc: unicorn.Uc, kind: int, address: int, size: int) -> bool:
        """native.c's l1_sync_stop: stop before an L1 access another running core has not reached."""
        s = self.state
        if s.stop_reason == STOP_SYNC:
            return True  # the write half of a stopped atomic
        if not s.sync_valid:
            self._sync_refresh()
        s.fault_cycle = 0
        if not (s.probing and s.probe_unsynced and kind == MEM_WRITE):
            late = False
            limit = s.sync_limit
            if s.page_order:
                pages = self._pages
                page = address >> 12
                bit = s.core_bit
                used = int(pages.sharers[page])
                cores = used & ~NOC
                if kind == MEM_WRITE:
                    pages.writers[page] |= bit
                if used == bit:
                    # (the walk notes it: native.c step)
                    if kind != MEM_WRITE and not pages.writers[page] & bit:
                        s.spin_threshold = min(s.spin_threshold, s.private_spin)
                    return False
                if used & NOC:
                    limit = s.noc_limit if cores == bit else min(limit, s.noc_limit)
                if int(pages.private_last[page]) >= s.time_base or not cores & bit:
                    s.fault_cycle = self.time_at(uc, uc.reg_read(PC_REG))
                    late = limit < SYNC_NEVER and s.fault_cycle > limit
                    if not cores:
                        pages.owner[page] = bit
                    elif not late:
                        self._unordered_before(address, kind, s.fault_cycle)
                    pages.sharers[page] |= bit
                    if not late:
                        return False
            if not late:
                if limit >= SYNC_NEVER:
                    return False
                s.fault_cycle = self.time_at(uc, uc.reg_read(PC_REG))
                if s.fault_cycle <= limit:
                    return False
            if s.probing and kind != MEM_WRITE and not s.probe_strict:
                s.probe_unsynced = 1
                return False
        self.stop_before_access(uc, address, size, kind == MEM_WRITE)
        return True

    def _private_access(self, address: int, kind: int, cycle: int) -> None:
        """native.c's private_access."""
        pages = self._pages
        page, line = address >> 12, address >> 6
        pages.private_last[page] = max(int(pages.private_last[page]), cycle)
        pages.line_last[line] = max(int(pages.line_last[line]), cycle)
        if kind == MEM_WRITE:
            pages.line_write[line] = max(int(pages.line_write[line]), cycle)

    def _unordered_before(self, address: int, kind: int, cycle: int) -> None:
        """native.c's unordered_before."""
        pages = self._pages
        if int(pages.owner[address >> 12]) == self.state.core_bit:
            return
        lines = pages.line_last if kind == MEM_WRITE else pages.line_write
        if int(lines[address >> 6]) >= cycle:
            pages.late[0] += 1
