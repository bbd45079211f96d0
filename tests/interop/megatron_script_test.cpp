// The Megatron-LM importer reads what bash would run, and nothing else: flags
// only from the training command and the variables it expands, never from
// here-documents, arrays nobody expands or other commands; prefix assignments
// last one command; a value that depends on control flow is named in a note,
// never guessed; values estimate would reject are errors at the flag; the
// expansion is bounded.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "interop/interop_test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::has_note;

// A small complete training command (every flag trainsim needs).
const std::string kFlags =
    "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 128 "
    "--max-position-embeddings 128 --position-embedding-type rope --normalization RMSNorm --swiglu "
    "--micro-batch-size 1 --bf16 --tokenizer-type NullTokenizer --vocab-size 999 "
    "--ffn-hidden-size 704 --global-batch-size 8";
const std::string kLaunch = "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py ";

json import(const std::string& script) { return json::parse(import_megatron_json(script, "")); }

json training_of(const json& envelope) {
  EXPECT_TRUE(envelope.value("ok", false)) << envelope.dump().substr(0, 600);
  return envelope.value("ok", false) ? envelope["result"]["config"]["training"] : json::object();
}

json notes_of(const json& envelope) {
  return envelope.value("ok", false) ? envelope["result"]["notes"] : json::array();
}

TEST(MegatronScriptTest, OtherCommandsAreNotReadButNamed) {
  const json envelope = import(
      "python tools/checkpoint/convert.py --model-type GPT --tensor-model-parallel-size 4 "
      "--target-pipeline-parallel-size 2\n" +
      kLaunch + kFlags + "\npython tools/eval.py --tensor-model-parallel-size 8\n");
  EXPECT_EQ(training_of(envelope)["tp"], 1);
  EXPECT_TRUE(has_note(notes_of(envelope),
                       "line 1 (convert.py) is not the training command (line 2, pretrain_gpt.py): its "
                       "flags --model-type, --tensor-model-parallel-size, --target-pipeline-parallel-size "
                       "are ignored"))
      << notes_of(envelope).dump();
  EXPECT_TRUE(has_note(notes_of(envelope), "line 3 (eval.py) is not the training command"));
}

TEST(MegatronScriptTest, SeveralTrainingCommandsAreNamedAndTheFirstIsRead) {
  const json envelope = import(kLaunch + kFlags + " --tensor-model-parallel-size 2\n" + kLaunch +
                               kFlags + " --tensor-model-parallel-size 4\n");
  EXPECT_EQ(training_of(envelope)["tp"], 2);
  EXPECT_TRUE(has_note(notes_of(envelope),
                       "the script has 2 training commands (lines 1, 2): only the first is read"));
}

TEST(MegatronScriptTest, HereDocumentBodiesAreData) {
  const json envelope = import("cat > args.txt <<'EOF'\n--tensor-model-parallel-size 4\n--num-layers 7\nEOF\n"
                               "cat <<-END\n\t--pipeline-model-parallel-size 2\n\tEND\n" +
                               kLaunch + kFlags);
  const json training = training_of(envelope);
  EXPECT_EQ(training["tp"], 1);
  EXPECT_EQ(training["pp"], 1);
  EXPECT_EQ(envelope["result"]["config"]["model"]["num_layers"], 4);
}

TEST(MegatronScriptTest, ArraysAreReadWhereExpandedOnly) {
  const json unused = import("UNUSED=(--tensor-model-parallel-size 4 --sequence-parallel)\n" + kLaunch + kFlags);
  EXPECT_EQ(training_of(unused)["tp"], 1);
  const json used = import("PAR=(--tensor-model-parallel-size 4 --sequence-parallel)\nPAR+=(--use-distributed-optimizer)\n" +
                           kLaunch + kFlags + " \"${PAR[@]}\"");
  EXPECT_EQ(training_of(used)["tp"], 4);
  EXPECT_EQ(training_of(used)["sequence_parallel"], true);
  EXPECT_EQ(training_of(used)["zero_stage"], 1);
  const json first = import("PAR=(--tensor-model-parallel-size 4 --sequence-parallel)\n" + kLaunch + kFlags + " $PAR");
  EXPECT_FALSE(first.value("ok", true)) << first.dump();  // $PAR is its first element only: no value
  EXPECT_EQ(first["errors"][0]["path"], "/args/--tensor-model-parallel-size");
}

// bash: NAME=value before a command sets NAME for that command only.
TEST(MegatronScriptTest, PrefixAssignmentsLastOneCommand) {
  const json unset = import("TP=4 true\n" + kLaunch + kFlags + " --tensor-model-parallel-size $TP");
  ASSERT_FALSE(unset.value("ok", true)) << unset.dump();
  EXPECT_EQ(unset["errors"][0]["path"], "/args/--tensor-model-parallel-size");
  EXPECT_EQ(unset["errors"][0]["message"],
            "uses \"$TP\", which bash computes at run time; replace it with its value");
  const json kept = import("TP=2\nTP=4 true\nexport PP=2\nenv PP=4 echo\n" + kLaunch + kFlags +
                           " --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP");
  EXPECT_EQ(training_of(kept)["tp"], 2);
  EXPECT_EQ(training_of(kept)["pp"], 2);
}

TEST(MegatronScriptTest, ValuesThatDependOnControlFlowAreNamedNotGuessed) {
  const json branch = import("if [ \"$SIZE\" = big ]; then\n  TP=4\nelse\n  TP=2\nfi\n" + kLaunch + kFlags +
                             " --tensor-model-parallel-size $TP");
  EXPECT_EQ(training_of(branch)["tp"], 1);  // as if not given: Megatron-LM's default
  EXPECT_TRUE(has_note(notes_of(branch),
                       "--tensor-model-parallel-size \"2\" is ignored: its value depends on control flow "
                       "(set in an else branch (line 3)), so trainsim does not pick a branch"))
      << notes_of(branch).dump();

  const json appended = import("ARGS=\"--bf16\"\nif [ -n \"$SP\" ]; then ARGS=\"$ARGS --sequence-parallel\"; fi\n" +
                               kLaunch + kFlags + " --tensor-model-parallel-size 2 $ARGS");
  EXPECT_EQ(training_of(appended)["sequence_parallel"], false);
  EXPECT_TRUE(has_note(notes_of(appended), "--sequence-parallel \"\" is ignored: its value depends on control flow (set in an if branch (line 2))"));

  const json cased = import("case $MODEL in\n  small) TP=1 ;;\n  \"big\") TP=8 ;;\nesac\n" + kLaunch + kFlags +
                            " --tensor-model-parallel-size $TP");
  EXPECT_TRUE(has_note(notes_of(cased), "(set in a case branch (line 3))")) << notes_of(cased).dump();
  const json chained = import("[ -n \"$BIG\" ] && TP=8\n" + kLaunch + kFlags + " --tensor-model-parallel-size $TP");
  EXPECT_TRUE(has_note(notes_of(chained), "(set in a command after && (line 1))")) << notes_of(chained).dump();
  const json looped = import("for n in 2 4; do TP=$n; done\n" + kLaunch + kFlags + " --tensor-model-parallel-size $TP");
  EXPECT_TRUE(has_note(notes_of(looped), "depends on control flow (set in a for loop body (line 1))"))
      << notes_of(looped).dump();

  // Set and used in the same branch: no doubt about the value there.
  const json same = import("if [ -n \"$RUN\" ]; then\n  TP=4\n  " + kLaunch + kFlags +
                           " --tensor-model-parallel-size $TP\nfi\n");
  EXPECT_EQ(training_of(same)["tp"], 4);
  EXPECT_FALSE(has_note(notes_of(same), "control flow"));
}

// Megatron-LM would refuse these at start-up; estimate would too.
TEST(MegatronScriptTest, ValuesEstimateRejectsAreErrorsAtTheirFlag) {
  // 6 GPUs: tp 3 divides the GPU count, so the heads are the only problem.
  json envelope = import("torchrun --nnodes 1 --nproc-per-node 6 pretrain_gpt.py " + kFlags +
                         " --tensor-model-parallel-size 3");
  ASSERT_FALSE(envelope.value("ok", true));
  EXPECT_EQ(envelope["errors"][0]["path"], "/args/--tensor-model-parallel-size");
  EXPECT_EQ(envelope["errors"][0]["message"], "must divide num_attention_heads (8), got 3");
  envelope = import("torchrun --nnodes 4 --nproc-per-node 8 pretrain_gpt.py " + kFlags);
  ASSERT_FALSE(envelope.value("ok", true));
  EXPECT_EQ(envelope["errors"][0]["path"], "/args/--global-batch-size");
  EXPECT_EQ(envelope["errors"][0]["message"], "must be a multiple of micro_batch_size*dp (32), got 8");
  envelope = import(kLaunch + kFlags + " --group-query-attention --num-query-groups 3");
  ASSERT_FALSE(envelope.value("ok", true));
  EXPECT_EQ(envelope["errors"][0]["path"], "/args/--num-query-groups");
  // Without the GPU count, rules that need it wait for system.num_gpus.
  envelope = import("pretrain_gpt.py " + kFlags + " --global-batch-size 7");
  EXPECT_TRUE(envelope.value("ok", false)) << envelope.dump();
}

// A 661-byte script doubling a variable 22 times took 5-8 s and 1.7 GB.
TEST(MegatronScriptTest, ExpansionIsBounded) {
  std::string script = "A=x\n";
  for (int i = 0; i < 60; ++i) script += "A=$A$A\n";
  script += kLaunch + kFlags + " --data-path $A\n";
  const auto start = std::chrono::steady_clock::now();
  const json envelope = import(script);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_FALSE(envelope.value("ok", true));
  EXPECT_EQ(envelope["errors"][0]["path"], "/args");
  EXPECT_EQ(envelope["errors"][0]["message"],
            "the value of A grows beyond 1 MiB: trainsim stops expanding the script (is a variable "
            "doubled over and over?) (line 22)");
  const json big = import(std::string(2 << 20, '#'));
  EXPECT_EQ(big["errors"][0]["message"],
            "the script is 2097152 bytes; trainsim reads launch scripts of at most 1048576 bytes");
}

TEST(MegatronScriptTest, NotesAreCapped) {
  std::string script = kLaunch + kFlags;
  for (int i = 0; i < 500; ++i) script += " --unknown-flag-" + std::to_string(i) + " 1";
  const json notes = notes_of(import(script));
  ASSERT_EQ(notes.size(), 101u);
  EXPECT_EQ(notes.back().get<std::string>().find("more notes"), notes.back().get<std::string>().size() - 10)
      << notes.back();
}

}  // namespace
}  // namespace trainsim
