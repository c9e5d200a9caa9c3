"""The vocabulary of theme names (rag.tasks.theme_phrases): words a name skips, never starts or ends with,
reads as a verb, an adjective or a noun, and the acronyms and fields it knows. Data only."""

STOP = set("""
a about above across after again against all almost along also although always among an and another any are
around as at available be because been before being below between both but by can cannot could did do does
doing done due during each either enough especially even ever every few first for from further furthermore
get gets given has have having here hence how however if in into is it its itself just known large largely
less like made mainly make makes many may might more moreover most much must namely near nearly neither no nor
not notably now of off often on once one only onto or other others otherwise our ours out over own per
perhaps rather recently same several shall should show shows shown showed significantly since so some still
such than that the their theirs them themselves then there thereby therefore these they this those though
three through thus to too two under until up upon us use used uses using various very via was we well were
what whether when where which while who whom whose why will with within without would yet
paper papers work works study code github available consistently outperform outperforms enable enables
allow allows reveal reveals capture captures exhibit exhibits rely relies studies studied propose proposed proposes introduce introduced introduces
present presents presented approach approaches method methods framework frameworks result results new novel
demonstrate demonstrates demonstrated based provide provides provided existing prior previous recent address
addresses challenge challenges problem problems task tasks achieve achieves achieving remains remain key
including include includes across leading lead leads often particular particularly specifically
experiments experimental empirical empirically extensive state art significant improve improves improved
improvement performance effective effectively efficient efficiently simple wide range real world
theoretical theoretically theory analysis analyze analyse analyzed establish establishes established
prove proves proved yields yield obtain obtains obtained consider considers considered develop develops
developed well-known widely fundamental understanding understood poorly terms term setting settings
however still despite whereas compared respectively finally moreover additionally thereby first second
state-of-the-art sota instead
""".split())
# Words too general to name a theme alone, or together ("Labeled data", "Success rate", "Deep neural"):
# fine inside a phrase that has a word of its own ("graph neural networks").
GENERIC = set("""
network model data learning algorithm function system set distribution error bound loss training
performance structure parameter feature domain query stability extension sample space method task
representation generalization optimization analysis condition property rate complexity dimension
input output objective solution value class framework approach setting process dynamic regime
architecture mechanism effect behavior behaviour capability application evaluation accuracy efficiency
information knowledge signal target source scale level step order size number case type form
guarantee result finding evidence role impact factor aspect
deep neural language large labeled labelled unlabeled unlabelled success quality machine benchmark dataset
zero-shot few-shot one-shot state-of-the-art end-to-end agent environment baseline experiment image text video
word token sequence prediction inference robustness generation modeling modelling research survey
""".split())
# Fields too broad to title a paragraph of a summary on anything ("Reinforcement learning" in a
# meta-learning or a sim-to-real summary, "Language models", "Neural networks"): compared as concepts.
BROAD = ("reinforcement learning", "deep reinforcement learning", "deep learning", "machine learning",
          "neural network", "deep neural network", "language model", "large language model", "computer vision",
          "natural language processing", "supervised learning", "transformer")
# Words a name never starts or ends with: prepositions, comparatives and adjectives that lead fragments
# such as "Faster and deviation", "Beyond and limit", "Similar and cost".
NOT_EDGE = set("""
beyond toward towards versus across against among along amid within without upon onto
faster slower better worse larger smaller higher lower stronger weaker greater deeper wider longer shorter
similar different general specific common standard simple complex naive exact approximate arbitrary
constant important informative various respective sustained existing throughout
supporting leveraging using providing enabling making yielding allowing achieving exploiting simulate simulating
certain whole entire main major minor key core basic novel unified joint single multiple many
possible necessary sufficient able unable likely unlikely hard easy difficult
limit limits limited fail fails failing lack lacks achieve enables improving increasing reducing
deep neural generative adversarial discriminative probabilistic stochastic deterministic semantic dynamic
multi-modal multimodal visual spatial temporal robust accurate scalable efficient effective optimal
advanced current inherent recent modern traditional classical conventional typical prominent popular powerful
promising remarkable significant substantial strong good great crucial critical essential best
called termed dubbed named coined aforementioned additional further other extra appropriate suitable flexible
future desired given proper practical useful usual instead required associated worst non
""".split())
# A word that introduces a name is a clause wherever it stands ("Metric called CLEVER").
NAMING_WORDS = {"called", "termed", "dubbed", "named", "coined"}
# Verbs (terms are plural-folded: "requires" -> "require"): a phrase holding one is a clause cut short
# ("self-consistency requires", "GS-Pose operates", "Detect unlabeled errors").
VERBS = {"way", "thing", "lot", "kind", "part", "use", "fact", "issue", "work", "learn", "train", "solve",
          "show", "find", "study", "prove", "apply", "compute", "predict", "estimate",
          "require", "remain", "provide", "yield", "achieve", "enable", "allow", "lead", "make", "depend",
          "emerge", "hold", "suggest", "imply", "need", "offer", "perform", "improve", "reduce", "outperform",
          "become", "seem", "appear", "exhibit", "capture", "match", "help", "fail", "rely", "ensure",
          "operate", "detect", "assess", "induce", "explore", "investigate", "examine", "evaluate", "build",
          "generate", "leverage", "exploit", "consist", "contain", "employ", "incorporate", "integrate",
          "introduce", "propose", "present", "develop", "design", "extend", "combine", "focus", "aim",
          "adapt", "obtain", "outline", "tackle", "handle", "mitigate", "overcome", "address", "boost", "fall",
          "revisit", "rethink", "bridge", "unify", "lift", "interpolate", "underpin", "admit", "gain", "rise",
          "couple", "govern", "dominate", "encapsulate", "determine", "characterize", "characterise", "exceed",
          "surpass", "outweigh", "persist", "possess", "attain", "suffice", "align", "forget", "built"}
# "-ing" words that are nouns at the head of a phrase ("learning rate", "rendering quality"); any other
# "-ing" word opening a phrase is a verb ("Assessing generative adversarial", "Inducing grammars").
ING_NOUNS = set("""
learning training rendering clustering embedding planning reasoning splatting fine-tuning sampling
pruning matching hashing pooling boosting encoding forecasting tracking labeling labelling modeling modelling
computing processing editing grounding mapping routing scheduling ranking prompting programming engineering
understanding answering captioning parsing tagging filtering denoising inpainting dubbing driving grasping
manufacturing teaching reading writing meta-learning pretraining pre-training self-training morphing
scaling thinking caching batching masking smoothing shaping clipping checkpointing merging steering unlearning
watermarking reranking forgetting coloring colouring partitioning coding decoding indexing imaging sensing
passing
""".split())
# Nouns that end like adjectives; any other word so ending is read as an adjective ("clouds neural",
# "semi-supervised probabilistic", "Multi-Channel Graph" is fine, "Deep neural" is not).
NOUN_ENDINGS_OK = set("""
signal interval potential proposal retrieval removal arrival trial tutorial journal animal capital approval
rival manual terminal material individual survival denial appraisal rehearsal disposal renewal reversal
referral withdrawal portal principal total mineral crystal metal pedal goal deal mammal petal
metric logic topic heuristic music arithmetic graphic clinic epidemic rhetoric mechanic critic traffic
fabric magic panic mimic dynamic dynamics physic physics tactic tactics
objective derivative alternative incentive initiative primitive narrative representative directive
perspective detective archive motive relative adjective collective positive negative
speed seed need feed bed embed shed hundred
agent gradient component segment element treatment environment assessment statement moment argument
experiment instrument document equipment alignment adjustment management deployment fragment student
patient client content parent talent event intent extent percent accent descent
variant assistant participant quadrant plant grant tenant pendant
boundary summary library dictionary vocabulary glossary adversary commentary
test interest request forest contest quest harvest
anomaly family assembly supply reply monopoly drive five table variable cable robotics
""".split())
NOUN_AR = set("scalar bar car star year radar seminar calendar grammar pillar collar dollar sugar war lidar".split())
ADJ_SUFFIX = ("ous", "ive", "able", "ible", "ful", "less", "ly", "ed", "al", "ic", "ent", "ant", "ary", "est")
# The last piece of a hyphenated adjective ("graph-based", "data-driven", "zero-shot", "first-order").
ADJ_PIECE = set("""
based driven aware free invariant specific shot level wise agnostic guided efficient like scale grained
order time step modal dimensional supervised trained tuned conditioned constrained dependent independent
art end oriented centric related informed inspired augmented enhanced preserving consistent sensitive
""".split())

KNOWN_ACRONYMS = {
    "rl": "reinforcement learning", "llm": "large language model", "lm": "language model",
    "gnn": "graph neural network", "gan": "generative adversarial network", "cnn": "convolutional neural network",
    "rnn": "recurrent neural network", "nlp": "natural language processing", "icl": "in-context learning",
    "fl": "federated learning", "dp": "differential privacy", "nmt": "neural machine translation",
    "3dgs": "3d gaussian splatting", "gs": "gaussian splatting", "rlhf": "reinforcement learning from human feedback",
    "ot": "optimal transport", "ssm": "state space model", "vae": "variational autoencoder",
    "dnn": "deep neural network", "kg": "knowledge graph", "qa": "question answering", "mt": "machine translation",
}
# Heads too vague to end a name: "Computational strategies", "Future directions", "A Bayesian approach"
# (compared plural-folded), and words of a paper's section headings, which name no subject anywhere in it.
VAGUE_HEADS = set("""
approach method methodology framework technique strategy direction paradigm scheme perspective overview
result finding contribution solution tool idea insight aspect issue problem challenge way application
study work survey review experiment baseline practice lesson
""".split())
SECTION_WORDS = set("introduction conclusion discussion background abstract preliminary preliminaries appendix".split())
# Determiners after which a word ending in -s is a verb, not a plural noun ("model capacity couples the ...").
# ("that" is left out: after a noun it mostly opens a relative clause, "time series that exhibit ...").
DETERMINERS = set("the a an this these those its their our each every such".split())
# Words ending in -s that open a noun phrase as nouns ("systems biology", "sports analytics").
PLURAL_MODIFIERS = set("""systems sports news arts series species means lens gas bias atlas chaos corpus
analytics physics dynamics robotics mathematics economics statistics graphics logistics genetics linguistics
ethics optics kinetics mechanics acoustics semantics diagnostics""".split())
# Words ending in -ian / -ean that are not adjectives from a name ("Bayesian", "Gaussian", "Euclidean" are).
NOT_PROPER_ADJ = set("""median guardian civilian pedestrian librarian comedian musician physician technician
politician veterinarian custodian historian ocean""".split())
# Adjectives from a name that are never its noun: a name does not end in one ("High-dimensional Bayesian" of
# "high-dimensional Bayesian optimisation"). Not Gaussian, Laplacian, Hessian, Hamiltonian: "a standard Gaussian",
# "the graph Laplacian", "the inverse Hessian" end names.
ADJ_ONLY = set("bayesian euclidean non-euclidean riemannian markovian".split())
