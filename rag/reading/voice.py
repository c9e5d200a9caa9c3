"""What a sentence's wording says of its role, where the role classifier (rag.reading.roles) can be wrong.

A summary quotes what a paper did. The classifier reads "Here we show that X ..." as background when it
opens an abstract, and "A diffusion model is a generative model that ..." as the paper's method when it
sits in the middle; the wording settles both:

    own_voice(s)    the paper speaking of its own work: "We propose ...", "Here we show ...", "In this
                    paper, we ...", "This paper introduces ..." -- a contribution
    defines(s)      a definition of a term the paper builds on: "X is a Y that ...", "X refers to ...",
                    "X is defined as ..." -- background
"""

from __future__ import annotations

import re

# The verbs an abstract's authors use of their own work.
_OWN_VERBS = (r"(?:propose|present|introduce|show|develop|study|provide|prove|derive|establish|demonstrate|design|"
              r"find|analy[sz]e|investigate|consider|give|obtain|formulate|characteri[sz]e|identify|argue|build|"
              r"construct|extend|revisit|describe|report|explore|examine|offer|address|tackle|train|evaluate|"
              r"compare|measure|quantify|release|learn|leverage|apply|focus|seek|aim|use|adopt|employ|"
              r"achieve|observe|uncover|reveal|generali[sz]e|cast|frame|reformulate|bound|devise|"
              r"create|collect|curate|benchmark|test|model)(?:s|es|d|ed)?")
_OWN = re.compile(
    r"^(?:(?:here|in this (?:paper|work|study|article|note)|in this (?:\w+ )?(?:paper|work)|herein|overall|"
    r"in (?:summary|short)|to (?:this|that) end|concretely|specifically|first|finally|then|next|moreover|"
    r"further(?:more)?|additionally|in addition|to (?:address|tackle|overcome|fill|bridge|close|solve) "
    r"(?:this|these|that|those|the)[^,]{0,60}),?\s+)?"
    r"(?:we (?:(?:also|then|further|first|next|now|additionally|finally|here|formally|empirically|"
    r"theoretically|rigorously|systematically|thus|therefore) )?" + _OWN_VERBS + r"\b"
    r"|(?:this|the present|our) (?:paper|work|study|article|note|letter|manuscript)(?: also)? " + _OWN_VERBS + r"\b"
    r"|our (?:main |key |central )?(?:contributions?|results?|findings|analysis|method|approach|framework|"
    r"experiments|theory) (?:is|are|shows?|shows|reveals?|demonstrates?|establish(?:es)?|suggests?|"
    r"yields?|achieves?|provides?|include|indicates?)\b)",
    re.IGNORECASE)
# "X is a Y that ...", "X are a class of ...", "X refers to ...", "X is defined as ...", "X, also known as
# Y, is ...": a subject that is not the paper's own ("we", "our", "this paper" define nothing here).
_NOT_SUBJECT = r"(?!(?:we|our|this|these|it|they|here|in|to|however|thus)\b)"
_DEFINES = re.compile(
    r"^" + _NOT_SUBJECT + r"[^,;:]{2,90}?\s(?:"
    r"(?:is|are) (?:a|an) (?:[\w-]+ ){0,5}?(?:that|which|where|whose|of|for|in which|used|designed)\b|"
    r"(?:is|are) (?:a|an) (?:(?:popular|common|widely[- ]used|powerful|fundamental|classical|well-known|"
    r"standard|prominent|general|principled|natural|important|emerging|promising|leading) )*"
    r"(?:class|family|type|kind|paradigm|framework|technique|approach|method|tool|branch|subfield|field|"
    r"area|form|variant|generali[sz]ation|extension)\b|"
    r"refers? to\b|(?:is|are) (?:defined|known|referred to|understood) as\b|"
    r"(?:is|are) concerned with\b|(?:is|are|has been|have been) (?:widely|commonly|extensively) used\b)",
    re.IGNORECASE)


def own_voice(s: str) -> bool:
    """Whether the sentence is the paper speaking of its own work ("We propose ...", "Here we show ...")."""
    return bool(_OWN.match(s.strip()))


def defines(s: str) -> bool:
    """Whether the sentence defines a term ("X is a Y that ...", "X refers to ...") rather than say what
    the paper did; a sentence in the paper's own voice never does."""
    s = s.strip()
    return bool(_DEFINES.match(s)) and not own_voice(s)
