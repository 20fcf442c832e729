// minijit: compiles one arithmetic function at a time, the way a JIT compiles a method:
// parse into a tree, lower into basic blocks of three-address code, simplify, allocate
// registers by linear scan, emit bytecode, and check the bytecode by running it. Everything is
// allocated from one jitarena arena per function, tagged with kinds named after the data
// structures and phases named after the passes; jitarena_method_done() logs each function.
//
// Built twice (CMakeLists.txt): the baseline, and a diff whose live intervals are heavier
// (MINIJIT_HEAVY), a known regression for memdiff to find.
#include "minijit.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "jitarena.hpp"

#ifndef MINIJIT_HEAVY
#define MINIJIT_HEAVY 0
#endif

namespace {

// Allocation kinds: one per data structure.
enum Kind : uint32_t { K_Token, K_ASTNode, K_IR, K_Simplify, K_LSRA_Interval, K_LSRA, K_Bytecode, K_Count };
const char* const KIND_NAMES[K_Count] = {"Token", "ASTNode", "IR", "Simplify", "LSRA_Interval", "LSRA", "Bytecode"};
// Phases: one per pass.
enum Phase : uint32_t { P_Parse, P_Lower, P_Simplify, P_RegAlloc, P_Emit, P_Count };
const char* const PHASE_NAMES[P_Count] = {"Parse", "Lower", "Simplify", "RegAlloc", "Emit"};

template <typename T>
using Vec = std::vector<T, jitarena_cxx::Allocator<T>>;
template <typename K, typename V>
using Map = std::unordered_map<K, V, std::hash<K>, std::equal_to<K>, jitarena_cxx::Allocator<std::pair<const K, V>>>;

thread_local std::string last_error;

struct CompileError {
    std::string message;
};

// ---- Parsing -------------------------------------------------------------------------------

enum class Tok { Num, Ident, Sym, End };

struct Token {
    Tok kind;
    int64_t value;
    const char* text;
    size_t len;
    bool is(const char* s) const { return (kind == Tok::Sym || kind == Tok::Ident) && len == std::strlen(s) && std::strncmp(text, s, len) == 0; }
};

enum class NodeKind { Num, Var, Neg, Bin, If, Let };

struct Node {
    NodeKind kind;
    char op;  // + - * / % for Bin; < = > for comparisons in If
    int64_t value;
    int slot;  // variable slot
    Node* a;
    Node* b;
    Node* c;
    Node* d;
};

class Parser {
public:
    Parser(jitarena_cxx::Arena& arena, const char* src) : arena_(arena), toks_(jitarena_cxx::Allocator<Token>(arena, K_Token)), scopes_(jitarena_cxx::Allocator<std::string>(arena, K_ASTNode)) {
        lex(src);
    }

    // name(params) = expr
    Node* function(std::string& name, int& params) {
        if (peek().kind != Tok::Ident) fail("expected a function name");
        name.assign(peek().text, peek().len);
        next();
        expect("(");
        while (!peek().is(")")) {
            if (peek().kind != Tok::Ident) fail("expected a parameter name");
            scopes_.emplace_back(peek().text, peek().len);
            next();
            if (!peek().is(")")) expect(",");
        }
        next();
        params = static_cast<int>(scopes_.size());
        expect("=");
        Node* body = expr();
        if (peek().is(";")) next();
        if (peek().kind != Tok::End) fail("unexpected text after the function body");
        return body;
    }

    int slots() const { return max_slots_; }

private:
    void lex(const char* s) {
        while (*s) {
            if (std::isspace(static_cast<unsigned char>(*s))) {
                s++;
            } else if (std::isdigit(static_cast<unsigned char>(*s))) {
                int64_t v = 0;
                const char* start = s;
                while (std::isdigit(static_cast<unsigned char>(*s))) v = v * 10 + (*s++ - '0');
                toks_.push_back({Tok::Num, v, start, static_cast<size_t>(s - start)});
            } else if (std::isalpha(static_cast<unsigned char>(*s)) || *s == '_') {
                const char* start = s;
                while (std::isalnum(static_cast<unsigned char>(*s)) || *s == '_') s++;
                toks_.push_back({Tok::Ident, 0, start, static_cast<size_t>(s - start)});
            } else if (s[0] == '=' && s[1] == '=') {
                toks_.push_back({Tok::Sym, 0, s, 2});
                s += 2;
            } else if (std::strchr("+-*/%()<>=,;", *s)) {
                toks_.push_back({Tok::Sym, 0, s, 1});
                s++;
            } else {
                fail(std::string("unexpected character '") + *s + "'");
            }
        }
        toks_.push_back({Tok::End, 0, s, 0});
    }

    const Token& peek() const { return toks_[pos_]; }
    void next() {
        if (toks_[pos_].kind != Tok::End) pos_++;
    }
    void expect(const char* s) {
        if (!peek().is(s)) fail(std::string("expected '") + s + "'");
        next();
    }
    [[noreturn]] void fail(const std::string& what) { throw CompileError{what}; }

    Node* make(NodeKind k, char op = 0, Node* a = nullptr, Node* b = nullptr) {
        Node* n = arena_.make<Node>(K_ASTNode);
        *n = Node{k, op, 0, -1, a, b, nullptr, nullptr};
        return n;
    }

    Node* expr() {
        if (peek().is("if")) {
            next();
            Node* l = sum();
            char op = peek().is("<") ? '<' : peek().is(">") ? '>' : peek().is("==") ? '=' : 0;
            if (op == 0) fail("expected a comparison (<, >, ==) after 'if'");
            next();
            Node* r = sum();
            expect("then");
            Node* t = expr();
            expect("else");
            Node* e = expr();
            Node* n = make(NodeKind::If, op, l, r);
            n->c = t;
            n->d = e;
            return n;
        }
        if (peek().is("let")) {
            next();
            if (peek().kind != Tok::Ident) fail("expected a name after 'let'");
            std::string name(peek().text, peek().len);
            next();
            expect("=");
            Node* value = expr();
            expect("in");
            scopes_.push_back(name);
            if (static_cast<int>(scopes_.size()) > max_slots_) max_slots_ = static_cast<int>(scopes_.size());
            Node* body = expr();
            scopes_.pop_back();
            Node* n = make(NodeKind::Let, 0, value, body);
            n->slot = static_cast<int>(scopes_.size());
            return n;
        }
        return sum();
    }
    Node* sum() {
        Node* l = term();
        while (peek().is("+") || peek().is("-")) {
            char op = *peek().text;
            next();
            l = make(NodeKind::Bin, op, l, term());
        }
        return l;
    }
    Node* term() {
        Node* l = unary();
        while (peek().is("*") || peek().is("/") || peek().is("%")) {
            char op = *peek().text;
            next();
            l = make(NodeKind::Bin, op, l, unary());
        }
        return l;
    }
    Node* unary() {
        if (peek().is("-")) {
            next();
            return make(NodeKind::Neg, 0, unary());
        }
        return atom();
    }
    Node* atom() {
        const Token& t = peek();
        if (t.kind == Tok::Num) {
            Node* n = make(NodeKind::Num);
            n->value = t.value;
            next();
            return n;
        }
        if (t.kind == Tok::Ident && !t.is("if") && !t.is("let")) {
            std::string name(t.text, t.len);
            for (int i = static_cast<int>(scopes_.size()) - 1; i >= 0; i--) {
                if (scopes_[i] == name) {
                    Node* n = make(NodeKind::Var);
                    n->slot = i;
                    next();
                    return n;
                }
            }
            fail("unknown name '" + name + "'");
        }
        if (t.is("(")) {
            next();
            Node* e = expr();
            expect(")");
            return e;
        }
        fail("expected a number, a name or '('");
    }

    jitarena_cxx::Arena& arena_;
    Vec<Token> toks_;
    size_t pos_ = 0;
    Vec<std::string> scopes_;
    int max_slots_ = 0;
};

// Wrapping arithmetic with total division (x / 0 = 0, x % 0 = 0): every function is defined
// on every input, so the bytecode can be checked against the tree.
int64_t arith(char op, int64_t a, int64_t b) {
    uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    switch (op) {
        case '+': return static_cast<int64_t>(x + y);
        case '-': return static_cast<int64_t>(x - y);
        case '*': return static_cast<int64_t>(x * y);
        case '/': return (b == 0 || (a == INT64_MIN && b == -1)) ? 0 : a / b;
        case '%': return (b == 0 || (a == INT64_MIN && b == -1)) ? 0 : a % b;
        case '<': return a < b;
        case '>': return a > b;
        default: return a == b;  // '='
    }
}

int64_t eval(const Node* n, int64_t* env) {
    switch (n->kind) {
        case NodeKind::Num: return n->value;
        case NodeKind::Var: return env[n->slot];
        case NodeKind::Neg: return static_cast<int64_t>(0 - static_cast<uint64_t>(eval(n->a, env)));
        case NodeKind::Bin: return arith(n->op, eval(n->a, env), eval(n->b, env));
        case NodeKind::If: return arith(n->op, eval(n->a, env), eval(n->b, env)) ? eval(n->c, env) : eval(n->d, env);
        case NodeKind::Let: env[n->slot] = eval(n->a, env); return eval(n->b, env);
    }
    return 0;
}

// ---- Three-address code in basic blocks ----------------------------------------------------

enum class Op : uint8_t { Param, Const, Copy, Neg, Bin, Cmp, Branch, Jump, Ret };

struct Block;

struct Inst {
    Op op;
    char bin;  // operator of Bin and Cmp
    int dst;   // virtual register written, -1 if none
    int a, b;  // virtual registers read, -1 if none
    int64_t imm;
    Block* t;  // Branch: taken if a != 0; Jump: target
    Block* f;  // Branch: otherwise
};

struct Block {
    int id;
    Vec<Inst*> insts;
    bool reachable;
    explicit Block(jitarena_cxx::Arena& arena, int i) : id(i), insts(jitarena_cxx::Allocator<Inst*>(arena, K_IR)), reachable(true) {}
};

class Lowering {
public:
    explicit Lowering(jitarena_cxx::Arena& arena) : arena_(arena), blocks(jitarena_cxx::Allocator<Block*>(arena, K_IR)) {}

    void function(const Node* body, int params, int slots) {
        Vec<int> vars(static_cast<size_t>(slots > params ? slots : params), -1, jitarena_cxx::Allocator<int>(arena_, K_IR));
        cur_ = new_block();
        for (int i = 0; i < params; i++) {
            vars[i] = vreg();
            emit(Inst{Op::Param, 0, vars[i], -1, -1, i, nullptr, nullptr});
        }
        int result = expr(body, vars);
        emit(Inst{Op::Ret, 0, -1, result, -1, 0, nullptr, nullptr});
    }

    Vec<Block*> blocks;
    int vregs = 0;

private:
    Block* new_block() {
        Block* b = arena_.make<Block>(K_IR, arena_, static_cast<int>(blocks.size()));
        blocks.push_back(b);
        return b;
    }
    int vreg() { return vregs++; }
    void emit(const Inst& i) { cur_->insts.push_back(arena_.make<Inst>(K_IR, i)); }

    int expr(const Node* n, Vec<int>& vars) {
        switch (n->kind) {
            case NodeKind::Num: {
                int d = vreg();
                emit(Inst{Op::Const, 0, d, -1, -1, n->value, nullptr, nullptr});
                return d;
            }
            case NodeKind::Var: return vars[n->slot];
            case NodeKind::Neg: {
                int a = expr(n->a, vars), d = vreg();
                emit(Inst{Op::Neg, 0, d, a, -1, 0, nullptr, nullptr});
                return d;
            }
            case NodeKind::Bin: {
                int a = expr(n->a, vars), b = expr(n->b, vars), d = vreg();
                emit(Inst{Op::Bin, n->op, d, a, b, 0, nullptr, nullptr});
                return d;
            }
            case NodeKind::Let: {
                vars[n->slot] = expr(n->a, vars);
                return expr(n->b, vars);
            }
            case NodeKind::If: {
                int a = expr(n->a, vars), b = expr(n->b, vars), c = vreg(), result = vreg();
                emit(Inst{Op::Cmp, n->op, c, a, b, 0, nullptr, nullptr});
                Block* then_b = new_block();
                Block* else_b = new_block();
                Block* join = new_block();
                emit(Inst{Op::Branch, 0, -1, c, -1, 0, then_b, else_b});
                cur_ = then_b;
                int t = expr(n->c, vars);
                emit(Inst{Op::Copy, 0, result, t, -1, 0, nullptr, nullptr});
                emit(Inst{Op::Jump, 0, -1, -1, -1, 0, join, nullptr});
                cur_ = else_b;
                int e = expr(n->d, vars);
                emit(Inst{Op::Copy, 0, result, e, -1, 0, nullptr, nullptr});
                emit(Inst{Op::Jump, 0, -1, -1, -1, 0, join, nullptr});
                cur_ = join;
                return result;
            }
        }
        return -1;
    }

    jitarena_cxx::Arena& arena_;
    Block* cur_ = nullptr;
};

// ---- Simplification: constant folding, identities, dead code --------------------------------

void simplify(jitarena_cxx::Arena& arena, Lowering& ir) {
    jitarena_cxx::Allocator<int> ints(arena, K_Simplify);
    Vec<int> defs(static_cast<size_t>(ir.vregs), 0, ints);
    for (Block* b : ir.blocks)
        for (Inst* i : b->insts)
            if (i->dst >= 0) defs[i->dst]++;
    Map<int, int64_t> constant(16, std::hash<int>(), std::equal_to<int>(), jitarena_cxx::Allocator<std::pair<const int, int64_t>>(arena, K_Simplify));
    bool changed = true;
    while (changed) {
        changed = false;
        for (Block* b : ir.blocks) {
            for (Inst* i : b->insts) {
                auto known = [&](int v, int64_t& out) {
                    auto it = constant.find(v);
                    if (it == constant.end()) return false;
                    out = it->second;
                    return true;
                };
                int64_t x, y;
                if ((i->op == Op::Bin || i->op == Op::Cmp) && known(i->a, x) && known(i->b, y)) {
                    *i = Inst{Op::Const, 0, i->dst, -1, -1, arith(i->bin, x, y), nullptr, nullptr};
                    changed = true;
                } else if (i->op == Op::Neg && known(i->a, x)) {
                    *i = Inst{Op::Const, 0, i->dst, -1, -1, static_cast<int64_t>(0 - static_cast<uint64_t>(x)), nullptr, nullptr};
                    changed = true;
                } else if (i->op == Op::Bin && (((i->bin == '+' || i->bin == '-') && known(i->b, y) && y == 0) || ((i->bin == '*' || i->bin == '/') && known(i->b, y) && y == 1))) {
                    *i = Inst{Op::Copy, 0, i->dst, i->a, -1, 0, nullptr, nullptr};
                    changed = true;
                } else if (i->op == Op::Bin && i->bin == '*' && ((known(i->a, x) && x == 0) || (known(i->b, y) && y == 0))) {
                    *i = Inst{Op::Const, 0, i->dst, -1, -1, 0, nullptr, nullptr};
                    changed = true;
                } else if (i->op == Op::Branch && known(i->a, x)) {
                    Block* target = x ? i->t : i->f;
                    *i = Inst{Op::Jump, 0, -1, -1, -1, 0, target, nullptr};
                    changed = true;
                }
                if (i->op == Op::Const && defs[i->dst] == 1 && constant.find(i->dst) == constant.end()) {
                    constant.emplace(i->dst, i->imm);
                    changed = true;
                }
            }
        }
    }
    // Reachability, then dead instructions (results nobody reads).
    for (Block* b : ir.blocks) b->reachable = false;
    Vec<Block*> work(jitarena_cxx::Allocator<Block*>(arena, K_Simplify));
    work.push_back(ir.blocks[0]);
    while (!work.empty()) {
        Block* b = work.back();
        work.pop_back();
        if (b->reachable) continue;
        b->reachable = true;
        for (Inst* i : b->insts) {
            if (i->t) work.push_back(i->t);
            if (i->f) work.push_back(i->f);
        }
    }
    Vec<int> uses(static_cast<size_t>(ir.vregs), 0, ints);
    bool removed = true;
    while (removed) {
        removed = false;
        std::fill(uses.begin(), uses.end(), 0);
        for (Block* b : ir.blocks) {
            if (!b->reachable) continue;
            for (Inst* i : b->insts) {
                if (i->a >= 0) uses[i->a]++;
                if (i->b >= 0) uses[i->b]++;
            }
        }
        for (Block* b : ir.blocks) {
            auto& v = b->insts;
            size_t before = v.size();
            v.erase(std::remove_if(v.begin(), v.end(), [&](Inst* i) { return i->dst >= 0 && i->op != Op::Param && uses[i->dst] == 0; }), v.end());
            removed |= v.size() != before;
        }
    }
}

// ---- Linear-scan register allocation ------------------------------------------------------

constexpr int REGISTERS = 4;

struct Interval {
    int vreg;
    int start, end;
    int reg;   // physical register, or -1 when spilled
    int slot;  // stack slot when spilled
#if MINIJIT_HEAVY
    // The diff build's deliberate regression: per-interval scratch that nothing needs.
    int64_t scratch[12];
#endif
};

struct Allocation {
    Vec<int> location;  // per vreg: 0..3 a register, 0x80 | n stack slot n, -1 never live
    int spills = 0;
    int registers_used = 0;
    int slots = 0;
    explicit Allocation(jitarena_cxx::Arena& arena, int vregs) : location(static_cast<size_t>(vregs), -1, jitarena_cxx::Allocator<int>(arena, K_LSRA)) {}
};

Allocation allocate_registers(jitarena_cxx::Arena& arena, Lowering& ir) {
    Vec<Interval*> by_vreg(static_cast<size_t>(ir.vregs), nullptr, jitarena_cxx::Allocator<Interval*>(arena, K_LSRA));
    Vec<Interval*> intervals(jitarena_cxx::Allocator<Interval*>(arena, K_LSRA));
    int pos = 0;
    auto touch = [&](int v, int at) {
        if (v < 0) return;
        Interval*& iv = by_vreg[v];
        if (!iv) {
            iv = arena.make<Interval>(K_LSRA_Interval);
            iv->vreg = v;
            iv->start = at;
            iv->end = at;
            iv->reg = -1;
            iv->slot = -1;
            intervals.push_back(iv);
        }
        if (at < iv->start) iv->start = at;
        if (at > iv->end) iv->end = at;
    };
    for (Block* b : ir.blocks) {
        if (!b->reachable) continue;
        for (Inst* i : b->insts) {
            touch(i->a, pos);
            touch(i->b, pos);
            touch(i->dst, pos);
            pos++;
        }
    }
    std::sort(intervals.begin(), intervals.end(), [](const Interval* x, const Interval* y) { return x->start < y->start || (x->start == y->start && x->vreg < y->vreg); });
    Allocation out(arena, ir.vregs);
    Vec<Interval*> active(jitarena_cxx::Allocator<Interval*>(arena, K_LSRA));
    bool used[REGISTERS] = {false, false, false, false};
    bool busy[REGISTERS] = {false, false, false, false};
    for (Interval* iv : intervals) {
        // Expire intervals that ended before this one starts.
        for (size_t k = 0; k < active.size();) {
            if (active[k]->end < iv->start) {
                busy[active[k]->reg] = false;
                active.erase(active.begin() + static_cast<long>(k));
            } else {
                k++;
            }
        }
        int free_reg = -1;
        for (int r = 0; r < REGISTERS && free_reg < 0; r++)
            if (!busy[r]) free_reg = r;
        if (free_reg >= 0) {
            iv->reg = free_reg;
            busy[free_reg] = used[free_reg] = true;
            active.push_back(iv);
            continue;
        }
        // Spill whichever interval ends last.
        Interval* last = iv;
        for (Interval* a : active)
            if (a->end > last->end) last = a;
        if (last != iv) {
            iv->reg = last->reg;
            last->reg = -1;
            active.erase(std::find(active.begin(), active.end(), last));
            active.push_back(iv);
        }
        last->slot = out.slots++;
        out.spills++;
    }
    for (Interval* iv : intervals) out.location[iv->vreg] = iv->reg >= 0 ? iv->reg : (0x80 | iv->slot);
    for (bool u : used) out.registers_used += u;
    return out;
}

// ---- Bytecode: emit and run -----------------------------------------------------------------

enum Byte : uint8_t { B_Param = 1, B_Const, B_Copy, B_Neg, B_Bin, B_Cmp, B_Branch, B_Jump, B_Ret };

void emit_bytecode(Lowering& ir, const Allocation& alloc, Vec<uint8_t>& code, jitarena_cxx::Arena& arena) {
    auto loc = [&](int v) { return static_cast<uint8_t>(v < 0 ? 0 : alloc.location[v] < 0 ? 0 : alloc.location[v]); };
    auto put64 = [&](int64_t x) {
        for (int k = 0; k < 8; k++) code.push_back(static_cast<uint8_t>(static_cast<uint64_t>(x) >> (8 * k)));
    };
    Vec<size_t> block_at(ir.blocks.size(), 0, jitarena_cxx::Allocator<size_t>(arena, K_Bytecode));
    Vec<std::pair<size_t, Block*>> fixups(jitarena_cxx::Allocator<std::pair<size_t, Block*>>(arena, K_Bytecode));
    auto target = [&](Block* b) {
        fixups.emplace_back(code.size(), b);
        code.push_back(0);
        code.push_back(0);
    };
    for (Block* b : ir.blocks) {
        if (!b->reachable) continue;
        block_at[b->id] = code.size();
        for (Inst* i : b->insts) {
            switch (i->op) {
                case Op::Param: code.insert(code.end(), {B_Param, loc(i->dst), static_cast<uint8_t>(i->imm)}); break;
                case Op::Const: code.insert(code.end(), {B_Const, loc(i->dst)}); put64(i->imm); break;
                case Op::Copy: code.insert(code.end(), {B_Copy, loc(i->dst), loc(i->a)}); break;
                case Op::Neg: code.insert(code.end(), {B_Neg, loc(i->dst), loc(i->a)}); break;
                case Op::Bin: code.insert(code.end(), {B_Bin, static_cast<uint8_t>(i->bin), loc(i->dst), loc(i->a), loc(i->b)}); break;
                case Op::Cmp: code.insert(code.end(), {B_Cmp, static_cast<uint8_t>(i->bin), loc(i->dst), loc(i->a), loc(i->b)}); break;
                case Op::Branch: code.insert(code.end(), {B_Branch, loc(i->a)}); target(i->t); target(i->f); break;
                case Op::Jump: code.push_back(B_Jump); target(i->t); break;
                case Op::Ret: code.insert(code.end(), {B_Ret, loc(i->a)}); break;
            }
        }
    }
    for (auto& f : fixups) {
        size_t at = block_at[f.second->id];
        code[f.first] = static_cast<uint8_t>(at);
        code[f.first + 1] = static_cast<uint8_t>(at >> 8);
    }
}

int64_t run_bytecode(const Vec<uint8_t>& code, const int64_t* args, int slots) {
    int64_t regs[REGISTERS] = {0, 0, 0, 0};
    std::vector<int64_t> stack(static_cast<size_t>(slots) + 1, 0);
    auto at = [&](uint8_t l) -> int64_t& { return (l & 0x80) ? stack[l & 0x7f] : regs[l & 3]; };
    size_t pc = 0;
    for (size_t steps = 0; pc < code.size() && steps < 1000000; steps++) {
        uint8_t op = code[pc];
        switch (op) {
            case B_Param: at(code[pc + 1]) = args[code[pc + 2]]; pc += 3; break;
            case B_Const: {
                uint64_t x = 0;
                for (int k = 0; k < 8; k++) x |= static_cast<uint64_t>(code[pc + 2 + k]) << (8 * k);
                at(code[pc + 1]) = static_cast<int64_t>(x);
                pc += 10;
                break;
            }
            case B_Copy: at(code[pc + 1]) = at(code[pc + 2]); pc += 3; break;
            case B_Neg: at(code[pc + 1]) = static_cast<int64_t>(0 - static_cast<uint64_t>(at(code[pc + 2]))); pc += 3; break;
            case B_Bin:
            case B_Cmp: at(code[pc + 2]) = arith(static_cast<char>(code[pc + 1]), at(code[pc + 3]), at(code[pc + 4])); pc += 5; break;
            case B_Branch: pc = at(code[pc + 1]) ? (code[pc + 2] | code[pc + 3] << 8) : (code[pc + 4] | code[pc + 5] << 8); break;
            case B_Jump: pc = code[pc + 1] | code[pc + 2] << 8; break;
            case B_Ret: return at(code[pc + 1]);
            default: throw CompileError{"bad bytecode"};
        }
    }
    throw CompileError{"bytecode ran off its end"};
}

int compile(const char* source, int64_t context, minijit_result* out) {
    jitarena_config cfg;
    jitarena_config_init(&cfg);
    cfg.kind_names = KIND_NAMES;
    cfg.kind_count = K_Count;
    cfg.phase_names = PHASE_NAMES;
    cfg.phase_count = P_Count;
    jitarena_cxx::Arena arena(cfg);  // one arena per compiled function, as in a JIT

    arena.set_phase(P_Parse);
    Parser parser(arena, source);
    std::string name;
    int params = 0;
    Node* body = parser.function(name, params);
    int slots = parser.slots() > params ? parser.slots() : params;

    arena.set_phase(P_Lower);
    Lowering ir(arena);
    ir.function(body, params, slots);

    arena.set_phase(P_Simplify);
    simplify(arena, ir);

    arena.set_phase(P_RegAlloc);
    Allocation alloc = allocate_registers(arena, ir);

    arena.set_phase(P_Emit);
    Vec<uint8_t> code(jitarena_cxx::Allocator<uint8_t>(arena, K_Bytecode));
    emit_bytecode(ir, alloc, code, arena);

    // Check the bytecode against the tree on a few inputs.
    int64_t value = 0;
    for (int trial = 0; trial < 4; trial++) {
        int64_t args[64], env[64];
        for (int k = 0; k < 64; k++) args[k] = env[k] = (k * 7 + trial * 13) % 23 - 9;
        int64_t want = eval(body, env);
        value = run_bytecode(code, args, alloc.slots);
        if (value != want) throw CompileError{"the bytecode computes " + std::to_string(value) + ", the source " + std::to_string(want)};
    }

    jitarena_method method = {sizeof(jitarena_method), name.c_str(), context, "FullOpts"};
    int rc = jitarena_method_done(arena.get(), &method);
    if (rc != 0) throw CompileError{std::string("jitarena_method_done: ") + jitarena_last_error_message()};
    if (out) {
        out->bytecode_size = code.size();
        out->registers_used = static_cast<uint32_t>(alloc.registers_used);
        out->spills = static_cast<uint32_t>(alloc.spills);
        out->checked_value = value;
    }
    return 0;
}

}  // namespace

extern "C" {

int minijit_open_log(const char* path) {
    return jitarena_log_open(path);
}

int minijit_close_log(void) {
    return jitarena_log_close();
}

const char* minijit_error(void) {
    return last_error.c_str();
}

int minijit_compile(const char* source, int64_t context, minijit_result* out) {
    last_error.clear();
    try {
        return compile(source, context, out);
    } catch (const CompileError& e) {
        last_error = e.message;
    } catch (const std::bad_alloc&) {
        last_error = std::string("out of memory: ") + jitarena_last_error_message();
    }
    return 1;
}

}  // extern "C"
